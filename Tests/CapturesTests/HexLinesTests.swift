import BeaconKit
import Captures
import Foundation
import Testing

/// Text captures: the corpus vector files and a hand-written file with every line shape.
struct HexLinesTests {
    /// Lines that are neither blank nor comments, by 1-based line number, as plain string handling
    /// sees them (independent of the reader).
    static func dataLines(_ text: String) -> [Int: String] {
        var lines: [Int: String] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let hex = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = hex.trimmingCharacters(in: CharacterSet(charactersIn: " \r"))
            if !trimmed.isEmpty, !trimmed.hasPrefix("#") { lines[index + 1] = String(line) }
        }
        return lines
    }

    /// How many data lines each vector file holds and how many of those are H4 events (`04…`);
    /// the rest are advertising data, link-layer PDUs or bare HCI events, which count malformed.
    static let vectorCounts: [String: (data: Int, events: Int)] = [
        "vectors/vectors-beacontools-ibeaconble.txt": (15, 0),
        "vectors/vectors-ble_monitor-all-hci.txt": (287, 287),
        "vectors/vectors-ble_monitor-ibeacon.txt": (19, 19),
        "vectors/vectors-gl-ble-sdk-scanlog.txt": (18, 0),
        "vectors/vectors-pureswift-bluetooth.txt": (10, 2),
        "vectors/vectors-reelyactive-advlib.txt": (27, 0),
    ]

    @Test(arguments: Fixtures.vectorFiles)
    func vectorFilesLoadAsHexLines(_ file: String) throws {
        let text = try String(contentsOfFile: Fixtures.path(file), encoding: .utf8)
        let lines = Self.dataLines(text)
        let counts = try #require(Self.vectorCounts[file])
        guard counts.events > 0 else {
            // Hex text with no H4 event (advertising data, link-layer PDUs) is not a capture.
            #expect(lines.count == counts.data)
            #expect(throws: CaptureError.self) { try Capture.load(path: Fixtures.path(file)) }
            do {
                _ = try Capture.load(path: Fixtures.path(file))
            } catch {
                #expect(error.description.contains("no line is an H4 HCI event"))
                #expect(error.description.hasPrefix(Fixtures.path(file)))
            }
            return
        }
        let capture = try Capture.load(path: Fixtures.path(file))
        #expect(capture.format == .hexLines)
        #expect(lines.count == counts.data)
        #expect(capture.records.count == counts.events)
        #expect(capture.malformedRecords == counts.data - counts.events)
        #expect(capture.malformedDetails.count == min(capture.malformedRecords, 10))
        #expect(capture.records.allSatisfy { $0.packet == .hciEvent && $0.timestamp == nil })
        for record in capture.records {
            // The record points at the line's event, after its 04 byte.
            let line = try #require(lines[record.number])
            let hex = String(line.prefix { $0 != "\t" }).replacingOccurrences(of: " ", with: "")
            #expect([0x04] + Array(capture.bytes[record.payload]) == [UInt8](hex: hex))
        }
    }

    /// ble_monitor's files say, per line, what the event holds; the decoded reports must agree.
    @Test(arguments: ["vectors/vectors-ble_monitor-ibeacon.txt", "vectors/vectors-ble_monitor-all-hci.txt"])
    func decodedReportsMatchTheDerivedFields(_ file: String) throws {
        let capture = try Capture.load(path: Fixtures.path(file))
        let lines = Self.dataLines(try String(contentsOfFile: Fixtures.path(file), encoding: .utf8))
        var firstReport: [Int: AdvertisingReport] = [:]
        var counters = DecodeCounters()
        capture.forEachAdvertisingReport(counters: &counters) { report, record in
            if firstReport[record.number] == nil { firstReport[record.number] = report }
        }
        var altBeacons = 0
        #expect(counters.events == capture.records.count)
        for record in capture.records {
            let line = try #require(lines[record.number])
            let report = try #require(firstReport[record.number], "line \(record.number)")
            #expect(line.contains("addr=\(report.address)"), "line \(record.number)")
            if let beacon = report.beacon, beacon.identity.kind == .altBeacon {
                // ble_monitor's own AltBeacon parser asserted these fields (an independent parse of the same bytes).
                let asserted =
                    "uuid='\(HexBytes.lowercase(beacon.identity.uuid.byteArray))'; major=\(beacon.identity.major); "
                    + "minor=\(beacon.identity.minor); measured power=\(beacon.measuredPower)"
                #expect(line.contains("type='AltBeacon'") && line.contains(asserted), "line \(record.number)")
                altBeacons += 1
            } else if let beacon = report.beacon {
                let derived =
                    "uuid=\(beacon.identity.uuid.uuidString.lowercased()) major=\(beacon.identity.major) "
                    + "minor=\(beacon.identity.minor) tx_power=\(beacon.measuredPower)"
                #expect(line.contains("derived_ibeacon: \(derived)"), "line \(record.number)")
            } else {
                #expect(line.contains("derived_ibeacon: NONE"), "line \(record.number)")
            }
        }
        if file.hasSuffix("ibeacon.txt") {
            #expect(firstReport.values.filter { $0.beacon != nil }.count == 17)
        }
        // Every AltBeacon ble_monitor's tests assert is decoded as one.
        #expect(altBeacons == capture.records.filter { lines[$0.number]?.contains("type='AltBeacon'") == true }.count)
    }

    @Test func everyLineShape() throws {
        let event = KnownPackets.h4Event.hex
        let spaced = KnownPackets.h4Event.map { String(format: "%02X", $0) }.joined(separator: " ")
        let text = [
            "# comment", // 1
            "", // 2
            "\(event)\texpected\tsource", // 3: event, tail ignored
            "  \(spaced)  \r", // 4: spaced upper-case, CRLF
            "   ", // 5: blank
            "04 3e zz", // 6: not hex
            "04 3e 0", // 7: odd digit count
            "0 43e", // 8: a digit pair split by a space
            "01 03 0c 00", // 9: a command, not an event
            "\t04 3e", // 10: nothing before the TAB: blank
            "04", // 11: an event without bytes (the decoder's to judge)
        ].joined(separator: "\n")
        let capture = try Capture.parse(Array(text.utf8), path: "lines.txt")
        #expect(capture.format == .hexLines)
        #expect(capture.records.map(\.number) == [3, 4, 11])
        #expect(capture.malformedRecords == 4)
        #expect(
            capture.malformedDetails == [
                "line 6: not hex", "line 7: not hex", "line 8: not hex",
                "line 9: not an H4 event (first byte 01, expected 04)",
            ])
        let decoded = DecodedCapture(capture)
        #expect(decoded.iBeacons.map(\.record.number) == [3, 4])
        #expect(decoded.counters.malformedByReason == [.emptyPacket: 1])
    }
}
