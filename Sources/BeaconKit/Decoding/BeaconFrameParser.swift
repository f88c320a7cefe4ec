public import Foundation

/// What one advertisement's data says for beacond: a beacon frame of any kind, Eddystone telemetry, and the TX Power
/// Level a phone may advertise (for ranging a private device).
public struct AdvertisementContent: Hashable, Sendable {
    public var beacon: BeaconFrame?
    public var telemetry: EddystoneTelemetry?
    /// The TX Power Level AD structure (0x0A): transmit power in dBm.
    public var txPowerLevel: Int8?

    @inlinable
    public init(beacon: BeaconFrame? = nil, telemetry: EddystoneTelemetry? = nil, txPowerLevel: Int8? = nil) {
        self.beacon = beacon
        self.telemetry = telemetry
        self.txPowerLevel = txPowerLevel
    }

    public static let empty = AdvertisementContent()
}

/// Finds beacon frames of every kind in advertising data in one walk over its AD structures:
/// - iBeacon: manufacturer data (0xFF), company 0x004C, `02 15`, then 21 bytes (`IBeaconParser`).
/// - AltBeacon: manufacturer data of any company, beacon code `BE AC`, 20 bytes of id (id1 16, id2 2, id3 2), the
///   reference RSSI at 1 m, one reserved byte (AltBeacon specification, AD length 0x1B).
/// - Eddystone: service data (0x16) for UUID 0xFEAA (`AA FE` on the air); frame 0x00 (UID: TX power at 0 m, 10-byte
///   namespace, 6-byte instance, 2 reserved bytes that beacons may leave out) and frame 0x20 (TLM, version 0).
/// The walk ends at a zero length byte or a length that runs past the data, as `IBeaconParser`'s does.
public enum BeaconFrameParser {
    @usableFromInline static let eddystoneServiceLow: UInt8 = 0xAA
    @usableFromInline static let eddystoneServiceHigh: UInt8 = 0xFE
    /// Eddystone's TX power is measured at 0 m; free-space loss at 1 m is 41 dB (Eddystone's protocol specification).
    public static let eddystoneLossAtOneMetre = 41

    /// Everything beacond uses in one advertisement.
    @inlinable
    public static func parse(advertisingData data: Span<UInt8>) -> AdvertisementContent {
        var content = AdvertisementContent()
        var offset = 0
        let count = data.count
        while offset < count {
            let length = Int(data[offset])
            if length == 0 { break }
            let end = offset + 1 + length
            if end > count { break }
            switch data[offset + 1] {
            case 0xFF where length >= 26:
                if content.beacon == nil {
                    content.beacon = parse(manufacturerData: data.extracting((offset + 2)..<end))
                }
            case 0x16 where length >= 5:
                if data[offset + 2] == eddystoneServiceLow, data[offset + 3] == eddystoneServiceHigh {
                    let frame = data.extracting((offset + 4)..<end)
                    if content.beacon == nil, let uid = parse(eddystoneUID: frame) {
                        content.beacon = uid
                    } else if let telemetry = parse(eddystoneTLM: frame) {
                        content.telemetry = telemetry
                    }
                }
            case 0x0A where length == 2:
                content.txPowerLevel = Int8(bitPattern: data[offset + 2])
            default:
                break
            }
            offset = end
        }
        return content
    }

    /// The first beacon frame in the data, of any kind: the decoders' hot path, so a walk of its own that stops at the
    /// first frame and reads nothing else (the same frame `parse` finds).
    @inlinable
    public static func beacon(advertisingData data: Span<UInt8>) -> BeaconFrame? {
        var offset = 0
        let count = data.count
        while offset < count {
            let length = Int(data[offset])
            if length == 0 { return nil }
            let end = offset + 1 + length
            if end > count { return nil }
            let type = data[offset + 1]
            if type == 0xFF, length >= 26 {
                if let frame = parse(manufacturerData: data.extracting((offset + 2)..<end)) { return frame }
            } else if type == 0x16, length >= 21, data[offset + 2] == eddystoneServiceLow, data[offset + 3] == eddystoneServiceHigh,
                let frame = parse(eddystoneUID: data.extracting((offset + 4)..<end))
            {
                return frame
            }
            offset = end
        }
        return nil
    }

    /// Manufacturer-specific data starting with the little-endian company identifier: an iBeacon (Apple's) or an
    /// AltBeacon (any company's).
    @inlinable
    public static func parse(manufacturerData data: Span<UInt8>) -> BeaconFrame? {
        guard data.count >= 25 else { return nil }
        if data[0] == 0x4C, data[1] == 0x00,
            let frame = IBeaconParser.parse(appleManufacturerPayload: data.extracting(2..<data.count))
        {
            return frame
        }
        guard data.count >= 26, data[2] == 0xBE, data[3] == 0xAC else { return nil }
        let uuid = UUID(
            uuid: (
                data[4], data[5], data[6], data[7], data[8], data[9], data[10], data[11],
                data[12], data[13], data[14], data[15], data[16], data[17], data[18], data[19]
            ))
        let id2 = UInt16(data[20]) << 8 | UInt16(data[21])
        let id3 = UInt16(data[22]) << 8 | UInt16(data[23])
        return BeaconFrame(
            identity: BeaconIdentity(kind: .altBeacon, uuid: uuid, major: id2, minor: id3),
            measuredPower: Int8(bitPattern: data[24]))
    }

    /// An Eddystone frame after the service UUID: UID is `00`, TX power, 10 + 6 bytes of id (then 2 optional
    /// reserved bytes).
    @inlinable
    public static func parse(eddystoneUID f: Span<UInt8>) -> BeaconFrame? {
        guard f.count >= 18, f[0] == 0x00 else { return nil }
        let uuid = UUID(
            uuid: (
                f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9],
                f[10], f[11], f[12], f[13], f[14], f[15], f[16], f[17]
            ))
        let atZero = Int(Int8(bitPattern: f[1]))
        return BeaconFrame(
            identity: BeaconIdentity(kind: .eddystone, uuid: uuid, major: 0, minor: 0),
            measuredPower: Int8(clamping: atZero - eddystoneLossAtOneMetre))
    }

    /// An unencrypted Eddystone-TLM frame: `20 00`, battery mV, temperature (8.8), advertising count, uptime (all
    /// big-endian).
    @inlinable
    public static func parse(eddystoneTLM f: Span<UInt8>) -> EddystoneTelemetry? {
        guard f.count >= 14, f[0] == 0x20, f[1] == 0x00 else { return nil }
        let millivolts = UInt16(f[2]) << 8 | UInt16(f[3])
        let rawTemperature = Int16(bitPattern: UInt16(f[4]) << 8 | UInt16(f[5]))
        func word(_ at: Int) -> UInt32 {
            UInt32(f[at]) << 24 | UInt32(f[at + 1]) << 16 | UInt32(f[at + 2]) << 8 | UInt32(f[at + 3])
        }
        return EddystoneTelemetry(
            batteryMillivolts: millivolts == 0 ? nil : millivolts,
            temperature: rawTemperature == Int16.min ? nil : Double(rawTemperature) / 256,
            advertisingCount: word(6), uptimeTenths: word(10))
    }
}
