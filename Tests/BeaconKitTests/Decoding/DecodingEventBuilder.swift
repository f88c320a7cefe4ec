import Foundation
import BeaconKit

/// Builds advertising data and HCI advertising report events byte by byte, for cases the corpus
/// lacks (several reports in one event, data status, RSSI 127, wrong counts).
enum DecodingEventBuilder {
    /// Proximity UUID E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 (the corpus' Bright/BlueCharm beacons).
    static let uuidBytes: [UInt8] = [
        0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2,
        0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
    ]
    /// Flags AD structure (LE General Discoverable, BR/EDR not supported), as most beacons send.
    static let flags: [UInt8] = [0x02, 0x01, 0x06]

    /// Apple manufacturer payload after the company id: `02 15`, UUID, major, minor, power.
    static func applePayload(major: UInt16, minor: UInt16, power: Int8, uuid: [UInt8] = uuidBytes) -> [UInt8] {
        [0x02, 0x15] + uuid + [
            UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF),
            UInt8(bitPattern: power),
        ]
    }

    /// Flags + the iBeacon manufacturer-specific AD structure (length 0x1A), 30 bytes.
    static func iBeaconAdvertisingData(major: UInt16, minor: UInt16, power: Int8 = -59) -> [UInt8] {
        flags + DecodingHarness.manufacturerADStructure([0x4C, 0x00] + applePayload(major: major, minor: minor, power: power))
    }

    static func frame(major: UInt16, minor: UInt16, power: Int8 = -59) -> BeaconFrame {
        let u = uuidBytes
        let uuid = UUID(
            uuid: (
                u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
                u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]
            ))
        return BeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: power)
    }

    /// One report of an LE Advertising Report event; `address` is the printed (MSB-first) value.
    struct LegacyReport {
        var eventType: UInt8 = 0
        var addressType: UInt8 = 1
        var address: UInt64 = 0xC6_B5_45_F6_F1_8E
        var data: [UInt8] = []
        var rssi: UInt8 = 0xCC // -52 dBm

        var bytes: [UInt8] {
            [eventType, addressType] + addressBytes(address) + [UInt8(data.count)] + data + [rssi]
        }
    }

    /// One report of an LE Extended Advertising Report event.
    struct ExtendedReport {
        /// 0x13: legacy PDU, scannable, connectable; data status complete.
        var eventType: UInt16 = 0x0013
        var addressType: UInt8 = 0
        var address: UInt64 = 0xA4_C1_38_2D_7A_27
        var txPower: UInt8 = 0x7F
        var rssi: UInt8 = 0xDB // -37 dBm
        var data: [UInt8] = []

        var bytes: [UInt8] {
            [UInt8(eventType & 0xFF), UInt8(eventType >> 8), addressType] + addressBytes(address)
                + [0x01, 0x00, 0xFF, txPower, rssi, 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 6)
                + [UInt8(data.count)] + data
        }
    }

    /// H4 packet `04 3E len 02 count reports…`; `count` defaults to the number of reports.
    static func legacyEvent(_ reports: [LegacyReport], count: UInt8? = nil) -> [UInt8] {
        metaEvent(subevent: 0x02, count: count ?? UInt8(reports.count), reports.flatMap(\.bytes))
    }

    /// H4 packet `04 3E len 0D count reports…`.
    static func extendedEvent(_ reports: [ExtendedReport], count: UInt8? = nil) -> [UInt8] {
        metaEvent(subevent: 0x0D, count: count ?? UInt8(reports.count), reports.flatMap(\.bytes))
    }

    private static func metaEvent(subevent: UInt8, count: UInt8, _ reports: [UInt8]) -> [UInt8] {
        [HCIEventDecoder.h4EventPacketType, HCIEventDecoder.leMetaEventCode, UInt8(2 + reports.count), subevent, count] + reports
    }

    /// The 6 address bytes as HCI carries them, least significant first.
    static func addressBytes(_ address: UInt64) -> [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: address >> (8 * UInt64($0))) }
    }
}
