import Foundation

/// Advertising data for each beacon kind, the exact bytes `BeaconFrameParser` reads: for tests, the benchmark and
/// generating captures (`btmgmt add-adv -d HEX` on a real controller takes this data).
public enum BeaconAdvertisingData {
    /// Flags AD structure (LE General Discoverable, BR/EDR not supported), as most beacons send.
    public static let flags: [UInt8] = [0x02, 0x01, 0x06]

    /// Flags and an iBeacon's manufacturer data (company 0x004C).
    public static func iBeacon(_ identity: BeaconIdentity, measuredPower: Int8, flags: Bool = true) -> [UInt8] {
        let payload: [UInt8] = [0x4C, 0x00, 0x02, 0x15] + identity.uuid.byteArray + numbers(identity) + [UInt8(bitPattern: measuredPower)]
        return (flags ? Self.flags : []) + structure(type: 0xFF, payload)
    }

    /// Flags and an AltBeacon's manufacturer data: company, `BE AC`, id1–id3, reference RSSI, reserved byte.
    public static func altBeacon(
        _ identity: BeaconIdentity, referenceRSSI: Int8, company: UInt16 = 0x0118, reserved: UInt8 = 0, flags: Bool = true
    ) -> [UInt8] {
        let payload: [UInt8] =
            [UInt8(truncatingIfNeeded: company), UInt8(truncatingIfNeeded: company >> 8), 0xBE, 0xAC]
            + identity.uuid.byteArray + numbers(identity) + [UInt8(bitPattern: referenceRSSI), reserved]
        return (flags ? Self.flags : []) + structure(type: 0xFF, payload)
    }

    /// Flags, the Eddystone service UUID list and an Eddystone-UID frame (TX power at 0 m, namespace, instance, the
    /// two reserved bytes).
    public static func eddystoneUID(_ identity: BeaconIdentity, txPowerAtZero: Int8, flags: Bool = true) -> [UInt8] {
        eddystone([0x00, UInt8(bitPattern: txPowerAtZero)] + identity.uuid.byteArray + [0, 0], flags: flags)
    }

    /// Flags, the Eddystone service UUID list and an unencrypted Eddystone-TLM frame.
    public static func eddystoneTLM(_ telemetry: EddystoneTelemetry, flags: Bool = true) -> [UInt8] {
        let millivolts = telemetry.batteryMillivolts ?? 0
        let temperature = telemetry.temperature.map { UInt16(bitPattern: Int16(clamping: Int(($0 * 256).rounded()))) } ?? 0x8000
        func word(_ value: UInt32) -> [UInt8] {
            [
                UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
            ]
        }
        let frame: [UInt8] =
            [0x20, 0x00, UInt8(millivolts >> 8), UInt8(millivolts & 0xFF), UInt8(temperature >> 8), UInt8(temperature & 0xFF)]
            + word(telemetry.advertisingCount) + word(telemetry.uptimeTenths)
        return eddystone(frame, flags: flags)
    }

    /// Flags and a TX Power Level structure: what a phone's advertisement may look like to beacond (the rest of a
    /// phone's data is of no use here).
    public static func phone(txPowerLevel: Int8?) -> [UInt8] {
        flags + (txPowerLevel.map { structure(type: 0x0A, [UInt8(bitPattern: $0)]) } ?? [])
    }

    static func eddystone(_ frame: [UInt8], flags: Bool) -> [UInt8] {
        (flags ? Self.flags : []) + structure(type: 0x03, [0xAA, 0xFE]) + structure(type: 0x16, [0xAA, 0xFE] + frame)
    }

    static func numbers(_ identity: BeaconIdentity) -> [UInt8] {
        [UInt8(identity.major >> 8), UInt8(identity.major & 0xFF), UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF)]
    }

    /// One AD structure: length, type, payload.
    public static func structure(type: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count + 1), type] + payload
    }
}
