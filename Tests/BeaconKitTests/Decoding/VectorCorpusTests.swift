import BeaconKit
import Foundation
import Testing

/// Every data line of every corpus vector file, decoded through the entry point its `kind` names
/// and checked against every field its `expected` column states.
///
/// Judgement calls where we deliberately differ from an upstream project:
/// - ibeacon-ble drops Tilt hydrometer frames and treats measured power 0 as "no distance"; both
///   are valid iBeacon frames, so both decode here (Tilt as an iBeacon, power 0 as `measuredPower` 0).
/// - PureSwift and reelyactive read measured power 0x74 as +116: it is an `Int8` bit pattern, so
///   +116 it is, however implausible.
/// - beacontools' raw-socket buffer: see `checkBeacontoolsBuffer`.
@Suite("Corpus vectors")
struct VectorCorpusTests {
    /// Data lines and iBeacons per file, counted by hand from the files. Guards the expectation
    /// parser: a positive misread as negative (or a line lost) changes a count.
    static let tallies: [String: (lines: Int, iBeacons: Int)] = [
        "vectors-beacontools-ibeaconble.txt": (15, 9),
        "vectors-ble_monitor-all-hci.txt": (287, 17),
        "vectors-ble_monitor-ibeacon.txt": (19, 17),
        "vectors-gl-ble-sdk-scanlog.txt": (18, 4),
        "vectors-pureswift-bluetooth.txt": (10, 3),
        "vectors-reelyactive-advlib.txt": (27, 7),
    ]

    @Test func fileListIsTheWholeVectorFolder() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: DecodingVectorCorpus.directory.path)
            .filter { $0.hasSuffix(".txt") }
        #expect(names.sorted() == DecodingVectorCorpus.fileNames.sorted())
        #expect(Set(Self.tallies.keys) == Set(DecodingVectorCorpus.fileNames))
    }

    @Test(arguments: DecodingVectorCorpus.fileNames)
    func everyLineDecodesAsExpected(fileName: String) throws {
        let (lines, problems) = try DecodingVectorCorpus.lines(of: fileName)
        for problem in problems { Issue.record(Comment(rawValue: problem)) }
        var iBeacons = 0
        for line in lines {
            guard let kind = DecodingVectorExpectation.kind(of: line.expected) else {
                Issue.record("\(line): unknown kind, expected column: \(line.expected.prefix(100))")
                continue
            }
            if check(line, kind: kind) != nil { iBeacons += 1 }
        }
        let tally = Self.tallies[fileName]
        #expect(lines.count == tally?.lines)
        #expect(iBeacons == tally?.iBeacons)
    }

    /// Decodes one line as its kind says, checks it, and returns the iBeacon it decoded.
    private func check(_ line: DecodingVectorCorpus.Line, kind: DecodingVectorExpectation.Kind) -> BeaconFrame? {
        let (expectation, problems) = DecodingVectorExpectation.iBeacon(in: line.expected, kind: kind)
        for problem in problems { Issue.record("\(line): \(problem)") }
        let bytes = line.bytes
        let decoded: BeaconFrame?
        switch kind {
        case .h4Event:
            decoded = checkHCIEvent(line, h4: true)
        case .hciEvent:
            decoded = checkHCIEvent(line, h4: false)
        case .beacontoolsSocketBuffer:
            checkBeacontoolsBuffer(line)
            return nil
        case .setAdvertisingDataParameters:
            // Advertising_Data_Length, then the fixed 31-byte Advertising_Data field.
            guard bytes.count == 32, Int(bytes[0]) <= 31 else {
                Issue.record("\(line): not 1 + 31 Set Advertising Data parameter bytes")
                return nil
            }
            decoded = DecodingHarness.iBeacon(advertisingData: Array(bytes[1...Int(bytes[0])]))
            // The zero padding after the significant part ends the walk without changing the answer.
            #expect(DecodingHarness.iBeacon(advertisingData: Array(bytes.dropFirst())) == decoded, "\(line)")
        case .linkLayerPDU:
            decoded = checkLinkLayerPDU(line)
        case .manufacturerDataOfCompany0x0015:
            decoded = DecodingHarness.iBeacon(manufacturerData: [0x15, 0x00] + bytes)
            // Only the company id makes it negative: the same payload under Apple's id is an iBeacon.
            #expect(DecodingHarness.iBeacon(appleManufacturerPayload: bytes) != nil, "\(line)")
            #expect(DecodingHarness.iBeacon(advertisingData: DecodingHarness.manufacturerADStructure([0x15, 0x00] + bytes)) == nil)
        case .appleManufacturerPayload:
            decoded = DecodingHarness.iBeacon(appleManufacturerPayload: bytes)
            // The three parser entry points agree on the same frame at each wrapping level.
            let manufacturerData = [0x4C, 0x00] + bytes
            #expect(DecodingHarness.iBeacon(manufacturerData: manufacturerData) == decoded, "\(line)")
            #expect(
                DecodingHarness.iBeacon(advertisingData: DecodingHarness.manufacturerADStructure(manufacturerData)) == decoded,
                "\(line)")
        case .manufacturerData:
            decoded = DecodingHarness.iBeacon(manufacturerData: bytes)
            #expect(DecodingHarness.iBeacon(advertisingData: DecodingHarness.manufacturerADStructure(bytes)) == decoded, "\(line)")
        case .advertisingData:
            // gl-ble-sdk's mac/rssi columns come from its scanner, not from these bytes: nothing to check.
            decoded = DecodingHarness.iBeacon(advertisingData: bytes)
        }
        compare(decoded, with: expectation, line)
        return decoded
    }

    private func compare(
        _ frame: BeaconFrame?, with expectation: DecodingVectorExpectation.IBeacon?,
        _ line: DecodingVectorCorpus.Line
    ) {
        guard let expectation else {
            #expect(frame == nil, "\(line): expected no iBeacon")
            return
        }
        guard let frame else {
            Issue.record("\(line): expected an iBeacon, decoded none")
            return
        }
        for uuid in expectation.uuids { #expect(frame.identity.uuid == uuid, "\(line)") }
        for major in expectation.majors { #expect(frame.identity.major == major, "\(line)") }
        for minor in expectation.minors { #expect(frame.identity.minor == minor, "\(line)") }
        for power in expectation.measuredPowers { #expect(frame.measuredPower == power, "\(line)") }
    }

    /// H4 packet or bare HCI event: outcome, report count and every stated report field.
    private func checkHCIEvent(_ line: DecodingVectorCorpus.Line, h4: Bool) -> BeaconFrame? {
        let (fields, problems) = DecodingVectorExpectation.hciReport(in: line.expected)
        for problem in problems { Issue.record("\(line): \(problem)") }
        let result = h4 ? DecodingHarness.h4(line.bytes) : DecodingHarness.event(line.bytes)
        #expect(result.outcome == .advertising(reports: fields.reportCount, malformedReports: 0), "\(line)")
        #expect(result.reports.count == fields.reportCount, "\(line)")
        if h4 {
            // The same event through the other entry point: identical reports, ranges still
            // pointing into the H4 buffer thanks to `offset`.
            let bare = DecodingHarness.event(Array(line.bytes.dropFirst()), offset: 1)
            #expect(bare.outcome == result.outcome, "\(line)")
            #expect(bare.reports == result.reports, "\(line)")
        }
        guard let report = result.reports.first else { return nil }
        #expect(report.source == fields.source, "\(line)")
        for type in fields.eventTypes { #expect(report.eventType == type, "\(line)") }
        for type in fields.addressTypes { #expect(report.addressType == type, "\(line)") }
        for address in fields.addresses { #expect(report.address == address, "\(line)") }
        for rssi in fields.rssis { #expect(report.rssi == rssi, "\(line)") }
        for length in fields.dataLengths { #expect(report.dataRange.count == length, "\(line)") }
        guard report.dataRange.lowerBound >= 0, report.dataRange.upperBound <= line.bytes.count else {
            Issue.record("\(line): dataRange \(report.dataRange) outside the packet")
            return report.beacon?.identity.kind == .iBeacon ? report.beacon : nil
        }
        #expect(report.dataComplete, "\(line)")
        // The report's beacon is exactly what its data range parses to on its own.
        #expect(report.beacon == DecodingHarness.beacon(advertisingData: Array(line.bytes[report.dataRange])), "\(line)")
        // This corpus states iBeacons only (its AltBeacon lines are checked against ble_monitor's asserts in
        // CapturesTests.HexLinesTests).
        return report.beacon?.identity.kind == .iBeacon ? report.beacon : nil
    }

    /// reelyActive's PDUs state `pdu_type=… txadd=… len=N(actual M) adva_hex=…`.
    private func checkLinkLayerPDU(_ line: DecodingVectorCorpus.Line) -> BeaconFrame? {
        guard let type = line.expected.firstMatch(of: /pdu_type=(\w+)/)?.1,
            let txAdd = line.expected.firstMatch(of: /txadd=(\d)/).flatMap({ UInt8($0.1) }),
            let lengths = line.expected.firstMatch(of: /len=(\d+)\(actual (\d+)\)/),
            let declared = Int(lengths.1), let actual = Int(lengths.2),
            let advA = line.expected.firstMatch(of: /adva_hex=([0-9a-fA-F]{12})/).flatMap({ DecodingVectorCorpus.bytes(hex: $0.1) })
        else {
            Issue.record("\(line): LL PDU line lacks pdu_type, txadd, len(actual) or adva_hex")
            return nil
        }
        #expect(line.bytes.count == 2 + actual, "\(line): the vector's own `actual` length")
        let result = DecodingHarness.linkLayer(line.bytes, rssi: -50)
        if actual < declared {
            #expect(result.outcome == .malformed(.truncatedPDU), "\(line)")
            #expect(result.reports.isEmpty, "\(line)")
            return nil
        }
        let legacyEventTypes: [Substring: UInt16] = ["ADV_IND": 0, "ADV_SCAN_IND": 2, "ADV_NONCONN_IND": 3, "SCAN_RSP": 4]
        guard let eventType = legacyEventTypes[type] else {
            // SCAN_REQ, CONNECT_IND, ADV_DIRECT_IND carry no advertising data.
            #expect(result.outcome == .notAdvertising, "\(line)")
            return nil
        }
        #expect(result.outcome == .advertising(reports: 1, malformedReports: 0), "\(line)")
        guard let report = result.reports.first else { return nil }
        #expect(report.source == .linkLayer, "\(line)")
        #expect(report.eventType == eventType, "\(line)")
        #expect(report.addressType == txAdd, "\(line)")
        // AdvA is on the air least significant byte first.
        #expect(report.address == BluetoothAddress(rawValue: advA.reversed().reduce(0) { $0 << 8 | UInt64($1) }), "\(line)")
        #expect(report.rssi == -50, "\(line)")
        #expect(report.dataRange == 8..<(2 + declared), "\(line)")
        return report.beacon?.identity.kind == .iBeacon ? report.beacon : nil
    }

    /// beacontools' `test_process_packet_dev_filter3` feeds its parser a synthetic raw-socket buffer
    /// `41 3e 41 02 01 03 01 <addr> 19 <30 AD bytes> dd`, expecting an iBeacon and rssi -35.
    ///
    /// Byte 0 is 0x41, not the H4 event type 0x04, so this is no H4 packet; the HCI event is
    /// decoded from byte 1. Two of its length fields disagree with its bytes:
    /// - the event's parameter length 0x41 (65) exceeds the 42 parameter bytes present, so the
    ///   event as given is `.malformed(.parameterLengthOverrun)` and delivers no report;
    /// - the report's data_length 0x19 (25) is shorter than the 30 AD bytes that follow, so the
    ///   iBeacon AD structure (length 0x1A) overruns the declared data. beacontools ignores
    ///   data_length and finds the iBeacon. We honour it, as the Core Specification requires and
    ///   as multi-report events need (the next report starts after data_length + RSSI).
    /// Deliberate difference: no iBeacon, and the RSSI is the byte after the declared data (0x00, the
    /// major's first byte), not the final 0xDD.
    /// With the parameter length repaired the report decodes and its other fields match.
    private func checkBeacontoolsBuffer(_ line: DecodingVectorCorpus.Line) {
        #expect(DecodingHarness.h4(line.bytes).outcome == .malformed(.unknownPacketType), "\(line)")
        var event = Array(line.bytes.dropFirst())
        let asGiven = DecodingHarness.event(event)
        #expect(asGiven.outcome == .malformed(.parameterLengthOverrun), "\(line)")
        #expect(asGiven.reports.isEmpty, "\(line)")

        event[1] = UInt8(event.count - 2)
        let repaired = DecodingHarness.event(event)
        #expect(repaired.outcome == .advertising(reports: 1, malformedReports: 0), "\(line)")
        guard let report = repaired.reports.first,
            let address = line.expected.firstMatch(of: /addr=([0-9a-fA-F:]{17})/).flatMap({ BluetoothAddress(String($0.1)) }),
            let eventType = line.expected.firstMatch(of: /evt_type=(\d+)/).flatMap({ UInt16($0.1) }),
            let addressType = line.expected.firstMatch(of: /addr_type=(\d+)/).flatMap({ UInt8($0.1) })
        else {
            Issue.record("\(line): no report, or the line lacks addr, evt_type or addr_type")
            return
        }
        #expect(report.address == address, "\(line)")
        #expect(report.eventType == eventType, "\(line)")
        #expect(report.addressType == addressType, "\(line)")
        #expect(report.dataRange.count == 0x19, "\(line)")
        #expect(report.rssi == 0, "\(line)")
        #expect(report.beacon == nil, "\(line)")
        // The AD bytes themselves hold the iBeacon beacontools finds; only data_length hides it.
        let advertisingData = Array(event[(report.dataRange.lowerBound)...].dropLast())
        #expect(DecodingHarness.iBeacon(advertisingData: advertisingData) != nil, "\(line)")
    }
}
