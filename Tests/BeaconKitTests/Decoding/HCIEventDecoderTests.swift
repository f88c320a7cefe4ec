import BeaconKit
import Testing

@Suite("HCI event decoder")
struct HCIEventDecoderTests {
    typealias Builder = DecodingEventBuilder

    @Test func severalLegacyReportsInOneEvent() {
        let reports = [
            Builder.LegacyReport(eventType: 0, addressType: 0, address: 0x11_22_33_44_55_66, data: Builder.flags, rssi: 0xC4),
            Builder.LegacyReport(
                eventType: 3, addressType: 1, address: 0xC6_B5_45_F6_F1_8E,
                data: Builder.iBeaconAdvertisingData(major: 1, minor: 2), rssi: 0xB3),
            Builder.LegacyReport(
                eventType: 4, addressType: 1, address: 0x6A_6B_C9_A2_3E_43,
                data: Builder.iBeaconAdvertisingData(major: 100, minor: 0, power: -65), rssi: 0xA0),
        ]
        let packet = Builder.legacyEvent(reports)
        let result = DecodingHarness.h4(packet)
        #expect(result.outcome == .advertising(reports: 3, malformedReports: 0))
        #expect(result.reports.count == 3)
        for (decoded, built) in zip(result.reports, reports) {
            #expect(decoded.source == .legacy)
            #expect(decoded.eventType == UInt16(built.eventType))
            #expect(decoded.addressType == built.addressType)
            #expect(decoded.address == BluetoothAddress(rawValue: built.address))
            #expect(decoded.rssi == Int8(bitPattern: built.rssi))
            #expect(decoded.dataComplete)
            // Ranges point into the H4 packet that was decoded.
            #expect(Array(packet[decoded.dataRange]) == built.data)
        }
        #expect(result.reports.map(\.beacon) == [nil, Builder.frame(major: 1, minor: 2), Builder.frame(major: 100, minor: 0, power: -65)])
        #expect(result.reports.map(\.isScanResponse) == [false, false, true])
    }

    @Test func reportCountLargerThanTheDataDeliversTheReportsThatFit() {
        let reports = [
            Builder.LegacyReport(data: Builder.iBeaconAdvertisingData(major: 7, minor: 8)),
            Builder.LegacyReport(address: 0x01_02_03_04_05_06, data: Builder.flags),
        ]
        let result = DecodingHarness.h4(Builder.legacyEvent(reports, count: 5))
        #expect(result.outcome == .advertising(reports: 2, malformedReports: 3))
        #expect(result.reports.map(\.address) == [BluetoothAddress(rawValue: 0xC6_B5_45_F6_F1_8E), BluetoothAddress(rawValue: 0x01_02_03_04_05_06)])
        #expect(result.reports.first?.beacon == Builder.frame(major: 7, minor: 8))

        var counters = DecodeCounters()
        counters.add(result.outcome)
        #expect(counters.reports == 2)
        #expect(counters.malformed == 3)
        #expect(counters.malformedByReason == [.reportOverrun: 3])
    }

    @Test func reportWhoseDataLengthOverrunsTheEventStopsDecoding() {
        var packet = Builder.legacyEvent([
            Builder.LegacyReport(data: Builder.flags),
            Builder.LegacyReport(data: Builder.iBeaconAdvertisingData(major: 1, minor: 1)),
        ])
        // Second report's data_length: first report is 2+6+1+3+1 = 13 bytes after `04 3E len 02 count`.
        let secondDataLength = 5 + 13 + 8
        #expect(packet[secondDataLength] == 30)
        packet[secondDataLength] = 31 // one more than present: the RSSI would lie past the event
        let result = DecodingHarness.h4(packet)
        #expect(result.outcome == .advertising(reports: 1, malformedReports: 1))
        #expect(result.reports.count == 1)
    }

    @Test func rssi127MeansNotAvailable() {
        let legacy = DecodingHarness.h4(Builder.legacyEvent([Builder.LegacyReport(data: Builder.flags, rssi: 0x7F)]))
        #expect(legacy.reports.count == 1)
        #expect(legacy.reports.first?.rssi == nil)
        let extended = DecodingHarness.h4(Builder.extendedEvent([Builder.ExtendedReport(rssi: 0x7F, data: Builder.flags)]))
        #expect(extended.reports.count == 1)
        #expect(extended.reports.first?.rssi == nil)
        // The extremes that are values: -128 and +126.
        let weakest = DecodingHarness.h4(Builder.legacyEvent([Builder.LegacyReport(rssi: 0x80)]))
        #expect(weakest.reports.first?.rssi == -128)
        let strongest = DecodingHarness.h4(Builder.legacyEvent([Builder.LegacyReport(rssi: 0x7E)]))
        #expect(strongest.reports.first?.rssi == 126)
    }

    @Test func malformedPackets() {
        let cases: [([UInt8], DecodeFailure)] = [
            ([], .emptyPacket),
            ([0x04], .truncatedHeader),
            ([0x04, 0x3E], .truncatedHeader),
            ([0x04, 0x3E, 0x00], .truncatedHeader),
            ([0x04, 0x3E, 0x01, 0x02], .truncatedHeader), // subevent without report count
            ([0x04, 0x3E, 0x01, 0x0D], .truncatedHeader),
            ([0x04, 0x3E, 0x0A, 0x02, 0x01], .parameterLengthOverrun),
            ([0x04, 0x3E, 0x02, 0x02, 0x00], .noReports),
            ([0x04, 0x3E, 0x02, 0x0D, 0x00], .noReports),
            ([0x07, 0x3E, 0x02, 0x02, 0x01], .unknownPacketType),
        ]
        for (packet, failure) in cases {
            let result = DecodingHarness.h4(packet)
            #expect(result.outcome == .malformed(failure), "\(packet)")
            #expect(result.reports.isEmpty)
        }
        #expect(DecodingHarness.event([]).outcome == .malformed(.emptyPacket))
        #expect(DecodingHarness.event([0x3E]).outcome == .malformed(.truncatedHeader))
    }

    @Test func packetsThatAreNotAdvertising() {
        let cases: [[UInt8]] = [
            [0x01, 0x03, 0x0C, 0x00], // HCI command (Reset)
            [0x02, 0x01, 0x20, 0x00, 0x00], // ACL
            [0x03, 0x01, 0x00, 0x00], // SCO
            [0x05, 0x01, 0x00, 0x00, 0x00], // ISO
            [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], // Command Complete
            [0x04, 0x3E, 0x02, 0x01, 0x00], // LE Connection Complete (truncated: no matter)
            [0x04, 0x3E, 0x02, 0x0B, 0x01], // LE Directed Advertising Report: no data to parse
        ]
        for packet in cases {
            #expect(DecodingHarness.h4(packet).outcome == .notAdvertising, "\(packet)")
        }
    }

    @Test func bytesBeyondTheParameterLengthAreIgnored() {
        // A read buffer's tail (PureSwift's vector is the first 26 bytes of a 258-byte read).
        let packet = Builder.legacyEvent([Builder.LegacyReport(data: Builder.iBeaconAdvertisingData(major: 3, minor: 4))])
        let result = DecodingHarness.h4(packet + [UInt8](repeating: 0xAA, count: 40))
        #expect(result.outcome == .advertising(reports: 1, malformedReports: 0))
        #expect(result.reports == DecodingHarness.h4(packet).reports)
    }

    @Test func eventOffsetShiftsDataRanges() {
        let packet = Builder.legacyEvent([Builder.LegacyReport(data: Builder.flags)])
        let event = Array(packet.dropFirst())
        let plain = DecodingHarness.event(event)
        let shifted = DecodingHarness.event(event, offset: 100)
        // Event bytes: 3E len 02 count | type addrType addr(6) length | data at 13.
        #expect(plain.reports.first?.dataRange == 13..<16)
        #expect(shifted.reports.first?.dataRange == 113..<116)
    }

    @Test func extendedReportWithIBeacon() throws {
        let report = Builder.ExtendedReport(
            eventType: 0x0013, addressType: 1, txPower: 0x05, rssi: 0xB1,
            data: Builder.iBeaconAdvertisingData(major: 9, minor: 10))
        let packet = Builder.extendedEvent([report])
        let result = DecodingHarness.h4(packet)
        #expect(result.outcome == .advertising(reports: 1, malformedReports: 0))
        let decoded = try #require(result.reports.first)
        #expect(decoded.source == .extended)
        #expect(decoded.eventType == 0x13)
        #expect(decoded.addressType == 1)
        #expect(decoded.address == BluetoothAddress(rawValue: 0xA4_C1_38_2D_7A_27))
        #expect(decoded.rssi == -79)
        #expect(decoded.dataComplete)
        #expect(decoded.beacon == Builder.frame(major: 9, minor: 10))
        #expect(Array(packet[decoded.dataRange]) == report.data)
    }

    @Test(arguments: [(UInt16(0x0020), "incomplete, more data to come"), (0x0040, "truncated"), (0x0060, "reserved status")])
    func extendedReportWhoseDataIsNotCompleteIsNotParsed(status: UInt16, meaning: String) {
        let report = Builder.ExtendedReport(eventType: 0x0013 | status, data: Builder.iBeaconAdvertisingData(major: 1, minor: 2))
        let packet = Builder.extendedEvent([report])
        let result = DecodingHarness.h4(packet)
        #expect(result.outcome == .advertising(reports: 1, malformedReports: 0), "\(meaning)")
        #expect(result.reports.first?.dataComplete == false, "\(meaning)")
        #expect(result.reports.first?.beacon == nil, "\(meaning)")
        // The data is still located, for callers that reassemble fragments.
        #expect(result.reports.first.map { Array(packet[$0.dataRange]) } == report.data, "\(meaning)")
    }

    @Test func extendedEventTypeReservedBitsAreCleared() {
        // PureSwift's macOS capture: event_type 0xA613 (bits 9, 10, 13, 15 reserved yet set).
        let report = Builder.ExtendedReport(eventType: 0xA613, data: Builder.iBeaconAdvertisingData(major: 5, minor: 6))
        let result = DecodingHarness.h4(Builder.extendedEvent([report]))
        #expect(result.reports.first?.eventType == 0x0013)
        #expect(result.reports.first?.dataComplete == true)
        #expect(result.reports.first?.beacon == Builder.frame(major: 5, minor: 6))
        // Bit 7 is reserved too: it must not read as a data status or anything else.
        let bit7 = DecodingHarness.h4(Builder.extendedEvent([Builder.ExtendedReport(eventType: 0x0093)]))
        #expect(bit7.reports.first?.eventType == 0x0013)
    }

    @Test func extendedScanResponseBit() {
        let result = DecodingHarness.h4(
            Builder.extendedEvent([
                Builder.ExtendedReport(eventType: 0x001B), // legacy SCAN_RSP to ADV_IND
                Builder.ExtendedReport(eventType: 0x0013),
            ]))
        #expect(result.outcome == .advertising(reports: 2, malformedReports: 0))
        #expect(result.reports.map(\.isScanResponse) == [true, false])
    }

    @Test func extendedReportCountLargerThanTheData() {
        let packet = Builder.extendedEvent([Builder.ExtendedReport(data: Builder.iBeaconAdvertisingData(major: 1, minor: 1))], count: 2)
        let result = DecodingHarness.h4(packet)
        #expect(result.outcome == .advertising(reports: 1, malformedReports: 1))
        #expect(result.reports.first?.beacon == Builder.frame(major: 1, minor: 1))
        // A data_length running past the event: no report.
        var overrun = Builder.extendedEvent([Builder.ExtendedReport(data: Builder.flags)])
        overrun[overrun.count - 4] = 4
        #expect(DecodingHarness.h4(overrun).outcome == .advertising(reports: 0, malformedReports: 1))
    }

    @Test func countersTallyEveryOutcome() {
        var counters = DecodeCounters()
        for packet in [
            DecodingEventBuilder.legacyEvent([.init(data: Builder.iBeaconAdvertisingData(major: 1, minor: 1)), .init()]),
            [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00],
            [0x04, 0x3E, 0x02, 0x02, 0x00],
            [],
        ] {
            counters.add(DecodingHarness.h4(packet).outcome)
        }
        #expect(counters.events == 4)
        #expect(counters.advertisingEvents == 1)
        #expect(counters.reports == 2)
        #expect(counters.malformed == 2)
        #expect(counters.malformedByReason == [.noReports: 1, .emptyPacket: 1])
    }
}
