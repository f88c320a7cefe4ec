import BeaconKit
import Captures
import Foundation
import Testing

/// The corpus captures, checked against what their README and expectation files say.
struct FixtureCaptureTests {
    /// One line of the `.expected.txt` beside the btsnoop fixture.
    struct ExpectedFrame {
        var fields: [String: String] = [:]

        init(line: String) {
            for token in line.split(whereSeparator: { $0 == "\t" || $0 == " " }) {
                guard let equals = token.firstIndex(of: "=") else { continue }
                fields[String(token[..<equals])] = String(token[token.index(after: equals)...])
            }
        }

        subscript(_ key: String) -> String { fields[key] ?? "<missing \(key)>" }
    }

    @Test func btsnoopYieldsTheExpectedBeaconFrames() throws {
        let capture = try Capture.load(path: Fixtures.path(Fixtures.btsnoop))
        #expect(capture.format == .btsnoop(datalink: 1002))
        #expect(capture.records.count == 2572)
        #expect(capture.malformedRecords == 0)
        #expect(capture.records.map(\.number) == Array(1...2572))

        let decoded = DecodedCapture(capture)
        #expect(decoded.counters.reports == 412)
        #expect(decoded.counters.malformed == 0)

        let text = try String(contentsOfFile: Fixtures.path(Fixtures.btsnoop + ".expected.txt"), encoding: .utf8)
        let expected = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { ExpectedFrame(line: String($0)) }
        #expect(expected.count == 11)
        let found = decoded.iBeacons
        try #require(found.count == expected.count)
        for (frame, (report, record)) in zip(expected, found) {
            let beacon = try #require(report.beacon)
            #expect("\(record.number)" == frame["record"])
            #expect(record.timestamp.map { String($0.iso8601.dropLast()) } == frame["ts"])
            #expect("\(report.eventType)" == frame["evt_type"])
            #expect("\(report.addressType)" == frame["addr_type"])
            #expect(report.address.description == frame["addr"])
            #expect(report.rssi.map(String.init) == frame["rssi"])
            #expect(beacon.identity.uuid.uuidString.lowercased() == frame["uuid"])
            #expect("\(beacon.identity.major)" == frame["major"])
            #expect("\(beacon.identity.minor)" == frame["minor"])
            #expect("\(beacon.measuredPower)" == frame["tx_power"])
            #expect(Array(capture.bytes[report.dataRange]).hex == frame["adv_data"])
        }
    }

    @Test func pcapngOverTheAirCaptureHasNoIBeacons() throws {
        let capture = try Capture.load(path: Fixtures.path(Fixtures.pcapng))
        #expect(capture.format == .pcapng)
        #expect(capture.records.count == 3755)
        #expect(capture.malformedRecords == 0)
        #expect(capture.records.allSatisfy { $0.timestamp != nil })

        let decoded = DecodedCapture(capture)
        #expect(decoded.iBeacons.isEmpty)
        #expect(decoded.reports.allSatisfy { $0.report.source == .linkLayer })
        #expect(decoded.counters.events == 3384) // packets on the advertising access address
        #expect(decoded.counters.reports == 2808) // ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP

        // The README's 1910 counts packets holding the bytes FF 4C 00 anywhere. The capture has no
        // CRC check, and 371 packets carry bit-flipped access addresses or AD lengths; of the
        // intact advertisements, 1818 have a well-formed Apple manufacturer AD structure
        // (checked independently with a Python walk of the raw blocks).
        let appleSignature: [UInt8] = [0xFF, 0x4C, 0x00]
        let packetsWithSignature = capture.records.filter { record in
            let packet = capture.bytes[record.payload]
            return packet.indices.contains { packet[$0...].starts(with: appleSignature) }
        }
        #expect(packetsWithSignature.count == 1910)

        var appleAdverts = 0
        for (report, _) in decoded.reports {
            var apple = false
            ADStructures.forEach(in: capture.bytes.span.extracting(report.dataRange)) { type, payload in
                let data = report.dataRange.lowerBound + payload.lowerBound
                if type == 0xFF, payload.count >= 2, capture.bytes[data] == 0x4C, capture.bytes[data + 1] == 0x00 {
                    apple = true
                }
            }
            if apple { appleAdverts += 1 }
        }
        #expect(appleAdverts == 1818)
    }
}
