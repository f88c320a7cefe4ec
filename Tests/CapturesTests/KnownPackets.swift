import BeaconKit
import Foundation

/// A real iBeacon advertising report (ble_monitor's test suite, in the corpus vectors) and the same
/// advertisement as the link layer carries it, for round trips through every container.
enum KnownPackets {
    /// H4 event: LE Advertising Report, ADV_IND, random address 6A:6B:C9:A2:3E:43, RSSI -77.
    static let h4Event = [UInt8](hex: "043e2a02010001433ea2c96b6a1e02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5b3")
    static var event: [UInt8] { Array(h4Event.dropFirst()) }
    static let advertisingData = [UInt8](hex: "02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5")
    static let identity = BeaconIdentity(
        uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID(),
        major: 100, minor: 0)
    static let measuredPower: Int8 = -59
    static let address = BluetoothAddress(rawValue: 0x6A6B_C9A2_3E43)
    static let eventRSSI: Int8 = -77
    /// HCI Reset command, without and with its H4 type byte.
    static let resetCommand: [UInt8] = [0x03, 0x0C, 0x00]
    static let h4ResetCommand: [UInt8] = [0x01, 0x03, 0x0C, 0x00]

    static let airRSSI: Int8 = -60
    /// ADV_NONCONN_IND (type 2) with TxAdd = 1 (random), AdvA, the same advertising data.
    static var advertisingPDU: [UInt8] {
        [0x42, UInt8(6 + advertisingData.count)] + [0x43, 0x3E, 0xA2, 0xC9, 0x6B, 0x6A] + advertisingData
    }

    /// LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR packet: RF channel 0 (advertising channel 37), signal
    /// power, noise power, offenses, reference AA, flags (dewhitened | signal power valid), then
    /// access address, PDU and a 3-byte CRC.
    static func linkLayerPacket(accessAddress: [UInt8] = [0xD6, 0xBE, 0x89, 0x8E], flags: UInt16 = 0x0003) -> [UInt8] {
        [
            0x00, UInt8(bitPattern: airRSSI), 0xA0, 0x00, 0xD6, 0xBE, 0x89, 0x8E,
            UInt8(flags & 0xFF), UInt8(flags >> 8),
        ] + accessAddress + advertisingPDU + [0x12, 0x34, 0x56]
    }

    /// 2021-02-01T03:27:59.789349Z, and one second later.
    static let firstTime: Int64 = 1_612_150_079_789_349
    static let secondTime: Int64 = 1_612_150_080_789_349
}
