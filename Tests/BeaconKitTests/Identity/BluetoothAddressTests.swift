import BeaconKit
import Testing

@Suite("Bluetooth address")
struct BluetoothAddressTests {
    @Test func parsesAndPrintsMostSignificantByteFirst() {
        let address = BluetoothAddress("A4:C1:38:BF:6F:AB")
        #expect(address?.rawValue == 0xA4C1_38BF_6FAB)
        #expect(address?.description == "A4:C1:38:BF:6F:AB")
        #expect(BluetoothAddress("a4:c1:38:bf:6f:ab") == address)
        #expect(BluetoothAddress("00:00:00:00:00:00")?.description == "00:00:00:00:00:00")
        #expect(BluetoothAddress("FF:FF:FF:FF:FF:FF")?.rawValue == 0xFFFF_FFFF_FFFF)
    }

    @Test func roundTripsThroughItsDescription() {
        for raw: UInt64 in [0, 1, 0x0102_0304_0506, 0xC6B5_45F6_F18E, 0xFFFF_FFFF_FFFF] {
            let address = BluetoothAddress(rawValue: raw)
            #expect(BluetoothAddress(address.description) == address)
        }
    }

    @Test(arguments: [
        "", "A4:C1:38:BF:6F", "A4:C1:38:BF:6F:AB:01", "A4:C1:38:BF:6F:A", "A4:C1:38:BF:6F:ABC",
        "G4:C1:38:BF:6F:AB", "A4-C1-38-BF-6F-AB", "A4:C1:38:BF:6F:AB:", ":A4:C1:38:BF:6F", "A4C138BF6FAB",
    ])
    func rejectsMalformedText(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func signedHexPairsAreRejected() {
        // `UInt8(_:radix:)` accepts a leading sign, so "+1" would read as 0x01.
        #expect(BluetoothAddress("+1:C1:38:BF:6F:AB") == nil)
        #expect(BluetoothAddress("-0:C1:38:BF:6F:AB") == nil)
    }

    @Test func readsHCIByteOrder() {
        let bytes: [UInt8] = [0xFF, 0x11, 0x6C, 0x24, 0x38, 0xC1, 0xA4, 0xEE]
        #expect(BluetoothAddress(littleEndianBytes: bytes.span, at: 1).description == "A4:C1:38:24:6C:11")
    }

    @Test func keepsOnly48Bits() {
        #expect(BluetoothAddress(rawValue: 0xFFFF_A4C1_38BF_6FAB).rawValue == 0xA4C1_38BF_6FAB)
    }

    @Test func ordersByValue() {
        let addresses = ["C6:B5:45:F6:F1:8E", "04:A3:16:9B:09:5A", "A4:C1:38:24:6C:11"].compactMap(BluetoothAddress.init)
        #expect(addresses.sorted().map(\.description) == ["04:A3:16:9B:09:5A", "A4:C1:38:24:6C:11", "C6:B5:45:F6:F1:8E"])
    }
}
