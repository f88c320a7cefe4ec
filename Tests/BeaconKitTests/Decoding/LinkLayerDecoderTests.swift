import BeaconKit
import Testing

@Suite("Link-layer decoder")
struct LinkLayerDecoderTests {
    typealias Builder = DecodingEventBuilder

    /// AdvA as on the air (least significant byte first) for 11:22:33:44:55:66.
    static let advA = Builder.addressBytes(0x11_22_33_44_55_66)

    static func pdu(header: UInt8, data: [UInt8]) -> [UInt8] {
        [header, UInt8(6 + data.count)] + advA + data
    }

    /// PDU type (header bits 0–3) → legacy HCI event type, or nil for PDUs without AdvData.
    @Test(arguments: [
        (UInt8(0x0), UInt16?(0)), // ADV_IND
        (0x1, nil), // ADV_DIRECT_IND
        (0x2, 3), // ADV_NONCONN_IND
        (0x3, nil), // SCAN_REQ
        (0x4, 4), // SCAN_RSP
        (0x5, nil), // CONNECT_IND
        (0x6, 2), // ADV_SCAN_IND
        (0x7, nil), // ADV_EXT_IND
        (0xF, nil), // reserved
    ])
    func pduTypeMapsToLegacyEventType(pduType: UInt8, eventType: UInt16?) throws {
        // ChSel (bit 5) and RxAdd (bit 7) must not change the mapping.
        for flags: UInt8 in [0x00, 0x20, 0x80] {
            let result = DecodingHarness.linkLayer(Self.pdu(header: pduType | flags, data: Builder.flags), rssi: -70)
            guard let eventType else {
                #expect(result.outcome == .notAdvertising)
                #expect(result.reports.isEmpty)
                continue
            }
            #expect(result.outcome == .advertising(reports: 1, malformedReports: 0))
            let report = try #require(result.reports.first)
            #expect(report.source == .linkLayer)
            #expect(report.eventType == eventType)
            #expect(report.isScanResponse == (eventType == 4))
            #expect(report.addressType == 0)
            #expect(report.address == BluetoothAddress(rawValue: 0x11_22_33_44_55_66))
            #expect(report.rssi == -70)
            #expect(report.dataRange == 8..<11)
            #expect(report.dataComplete)
        }
    }

    @Test func txAddBitIsTheAddressType() {
        let result = DecodingHarness.linkLayer(Self.pdu(header: 0x40, data: []), rssi: nil)
        #expect(result.reports.first?.addressType == 1)
        #expect(result.reports.first?.rssi == nil)
        #expect(result.reports.first?.dataRange == 8..<8)
    }

    @Test func iBeaconInAnAdvertisingPDU() {
        let data = Builder.iBeaconAdvertisingData(major: 1, minor: 8792)
        var reports: [AdvertisingReport] = []
        let bytes = Self.pdu(header: 0x42, data: data)
        let outcome = LinkLayerDecoder.decode(advertisingPDU: bytes.span, offset: 17, rssi: -60) { reports.append($0) }
        #expect(outcome == .advertising(reports: 1, malformedReports: 0))
        #expect(reports.first?.beacon == Builder.frame(major: 1, minor: 8792))
        #expect(reports.first?.dataRange == 25..<(25 + data.count))
    }

    @Test func truncatedPDUs() {
        let full = Self.pdu(header: 0x40, data: Builder.flags)
        let cases: [[UInt8]] = [
            [],
            [0x40],
            Array(full.dropLast()), // length says one byte more than present
            [0x40, 0x05] + Self.advA[0..<5], // ADV_IND shorter than its AdvA
            [0x43, 0x0C] + Self.advA, // reelyActive's SCAN_REQ: length 12, 6 bytes present
        ]
        for bytes in cases {
            let result = DecodingHarness.linkLayer(bytes)
            #expect(result.outcome == .malformed(.truncatedPDU), "\(bytes)")
            #expect(result.reports.isEmpty)
        }
    }

    @Test func bytesAfterTheDeclaredLengthAreIgnored() {
        // A capture that keeps the 3 CRC bytes after the PDU.
        let result = DecodingHarness.linkLayer(Self.pdu(header: 0x40, data: Builder.flags) + [0xAA, 0xBB, 0xCC])
        #expect(result.outcome == .advertising(reports: 1, malformedReports: 0))
        #expect(result.reports.first?.dataRange == 8..<11)
    }

    /// 127 is "not available" for link-layer reports too, as HCI defines it: no receiver measures
    /// +127 dBm. Found by fuzz-pcap (docs/reliability.md); the PDU is the one it found, a 37-byte
    /// ADV_IND from a pseudo-header whose signal power was 0x7F and marked valid.
    @Test func rssi127IsNotAvailable() throws {
        let pdu = DecodingVectorCorpus.bytes(hex: "4025a8494f78d200d6be898e40198dc2100640000000000200d6be898e4019c2000200d6be898e4019c2")
        let found = DecodingHarness.linkLayer(try #require(pdu), rssi: 127)
        #expect(found.outcome == .advertising(reports: 1, malformedReports: 0))
        #expect(found.reports.map(\.rssi) == [nil])
        // Every other value is a reading, passed on as is.
        for rssi: Int8 in [-128, -60, 0, 20, 126] {
            #expect(DecodingHarness.linkLayer(Self.pdu(header: 0x40, data: Builder.flags), rssi: rssi).reports.map(\.rssi) == [rssi])
        }
    }
}
