import BeaconKit
import Captures
import TestKit
import Testing

/// Truncated and corrupted files never trap and never produce counters that contradict each other.
struct RobustnessTests {
    /// A file to damage, and the shortest prefix below which a CaptureError is the right answer.
    struct Subject: CustomStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var headerLength: Int
        var isText = false
        var description: String { name }
    }

    /// Every prefix up to `sliceLength` bytes is tried, and mutations damage only that much of the
    /// large corpus files: each parse costs time proportional to its input, and the slice already
    /// holds every record and block shape of the file. Beyond it, `spreadCuts` cuts spread evenly.
    static let sliceLength = 4096
    static let spreadCuts = 40

    static func subjects() throws -> [Subject] {
        let air = RoundTripTests.linkLayer
        let h4 = RoundTripTests.h4WithPseudoHeader
        let vectors = try Fixtures.bytes("vectors/vectors-ble_monitor-all-hci.txt")
        // Cut inside the first data line, the text no longer starts with hex: not a capture.
        let firstDataLineEnd = vectors.indices.filter { vectors[$0] == UInt8(ascii: "\n") }.dropFirst().first ?? 0
        return [
            Subject(name: "btsnoop fixture", bytes: try Fixtures.bytes(Fixtures.btsnoop), headerLength: 16),
            Subject(name: "pcapng fixture", bytes: try Fixtures.bytes(Fixtures.pcapng), headerLength: 28),
            Subject(name: "hex vectors", bytes: Array(vectors.prefix(sliceLength)), headerLength: firstDataLineEnd, isText: true),
            Subject(
                name: "btsnoop 1001", bytes: CaptureWriter.btsnoop(datalink: 1001, RoundTripTests.btsnoopCases[0].packets),
                headerLength: 16),
            Subject(
                name: "btsnoop 2001", bytes: CaptureWriter.btsnoop(datalink: 2001, RoundTripTests.btsnoopCases[2].packets),
                headerLength: 16),
            Subject(
                name: "pcap LE µs 256", bytes: CaptureWriter.pcap(linkType: 256, nanoseconds: false, bigEndian: false, air),
                headerLength: 24),
            Subject(
                name: "pcap BE ns 201", bytes: CaptureWriter.pcap(linkType: 201, nanoseconds: true, bigEndian: true, h4),
                headerLength: 24),
            Subject(
                name: "pcapng LE 256", bytes: CaptureWriter.pcapngSection(linkType: 256, bigEndian: false, resolution: 9, air + air),
                headerLength: 28),
            Subject(
                name: "pcapng BE 201",
                bytes: CaptureWriter.pcapngSection(
                    linkType: 201, bigEndian: true, resolution: 0x8A,
                    obsoleteFirst: true, h4 + h4), headerLength: 28),
        ]
    }

    /// Internal consistency of a loaded capture and of one decoding pass over it; nil when sane,
    /// else what is wrong.
    static func insanity(_ capture: Capture) -> String? {
        var previous = 0
        for record in capture.records {
            guard record.payload.lowerBound >= 0, record.payload.upperBound <= capture.bytes.count else {
                return "record \(record.number) payload \(record.payload) outside \(capture.bytes.count) bytes"
            }
            guard record.number > previous else { return "record numbers not increasing at \(record.number)" }
            previous = record.number
        }
        guard capture.malformedDetails.count == min(capture.malformedRecords, 10) else { return "details count" }
        var counters = DecodeCounters()
        var escaped: String?
        capture.forEachAdvertisingReport(counters: &counters) { report, record in
            if !(record.payload.lowerBound <= report.dataRange.lowerBound && report.dataRange.upperBound <= record.payload.upperBound) {
                escaped = "report data \(report.dataRange) outside record \(record.number) payload \(record.payload)"
            }
        }
        if let escaped { return escaped }
        let decodable = capture.records.filter { $0.packet != .other }.count
        guard counters.events == decodable, counters.advertisingEvents <= counters.events,
            counters.iBeacons <= counters.reports,
            counters.malformed == counters.malformedByReason.values.reduce(0, +)
        else {
            return "counters \(counters) for \(decodable) decodable records"
        }
        return nil
    }

    @Test(arguments: try subjects())
    func everyPrefixParsesSanely(_ subject: Subject) throws {
        let full = try Capture.parse(subject.bytes, path: subject.name)
        #expect(full.malformedRecords == 0)
        let count = subject.bytes.count
        let spread = max(1, (count - Self.sliceLength) / Self.spreadCuts)
        let cuts = Array(0...min(Self.sliceLength, count)) + Array(stride(from: Self.sliceLength + 7, to: count, by: spread)) + [count]
        var failures: [String] = []
        for cut in cuts {
            do {
                let capture = try Capture.parse(Array(subject.bytes.prefix(cut)), path: subject.name)
                if let problem = Self.insanity(capture) { failures.append("cut \(cut): \(problem)") }
                // A prefix holds the full file's records up to the cut (a text line cut short may
                // still be a shorter event, so its last record is left out of the comparison).
                let kept = subject.isText ? capture.records.dropLast() : capture.records[...]
                if !full.records.starts(with: kept) { failures.append("cut \(cut): records differ from the full file's") }
                if !subject.isText, capture.malformedRecords > 1 { failures.append("cut \(cut): \(capture.malformedDetails)") }
            } catch {
                if cut >= subject.headerLength { failures.append("cut \(cut): \(error)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test(arguments: try subjects())
    func randomMutationsParseSanely(_ subject: Subject) throws {
        var generator = SplitMix64(state: 0x5EED_0000 ^ UInt64(subject.name.utf8.reduce(0) { $0 &* 31 &+ Int($1) }.magnitude))
        let base = Array(subject.bytes.prefix(Self.sliceLength))
        var failures: [String] = []
        var loaded = 0
        for round in 0..<500 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                // Lengths break most often at their extremes: favour 00 and FF.
                switch UInt8.random(in: 0...3, using: &generator) {
                case 0: bytes[index] = 0x00
                case 1: bytes[index] = 0xFF
                default: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if Bool.random(using: &generator) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &generator)) }
            do {
                let capture = try Capture.parse(bytes, path: subject.name)
                loaded += 1
                if let problem = Self.insanity(capture) { failures.append("round \(round): \(problem)") }
            } catch {
                if !error.description.hasPrefix(subject.name + ": ") { failures.append("round \(round): \(error)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        // Most damage lands in records, not the file header: most mutants still load.
        #expect(loaded > 250)
    }
}
