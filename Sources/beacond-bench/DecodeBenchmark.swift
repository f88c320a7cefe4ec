import ArgumentParser
import BeaconKit
import Foundation

/// `beacond-bench decode`: single-core throughput of the HCI advertising decoder and of the
/// iBeacon parser alone, on real frames from the corpus mixed into one large in-memory capture.
/// Targets (docs/performance.md): ≥ 10 million events/s on one core.
struct DecodeBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode throughput on real frames (run with -c release).")

    @Option(help: "Events in the in-memory capture (the corpus repeated, shuffled per copy).")
    var events = 1_000_000

    @Option(help: "Time budget per measurement, in seconds (at least 5 rounds run regardless).")
    var seconds = 2.0

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Option(help: "Corpus directory (default: Tests/Fixtures/corpus of this package).")
    var corpus: String?

    @Option(name: .customLong("dump-frames"), help: ArgumentHelp(
        "Write the distinct events and their AD bytes to this file for the Python peers, then exit.",
        valueName: "path"))
    var dumpFrames: String?

    func validate() throws {
        guard events > 0 else { throw ValidationError("--events must be positive") }
        guard seconds > 0, seconds.isFinite else { throw ValidationError("--seconds must be positive") }
    }

    func run() throws {
        let directory = corpus.map { URL(fileURLWithPath: $0) } ?? FrameCorpus.defaultDirectory
        let frames = try FrameCorpus.load(from: directory)
        if let path = dumpFrames {
            let total = try FrameDump.write(frames, to: path)
            print("wrote \(frames.events.count) events, \(total.reports) reports, \(total.iBeacons) iBeacons to \(path)")
            return
        }
        let buffer = EventBuffer(repeating: frames.events, count: events)
        let expected = Self.expectedTally(of: frames.events, in: buffer)
        let timer = RoundTimer(budget: .milliseconds(Int(seconds * 1000)))

        var decodeMismatch: DecodeTally?
        let decodeTimes = timer.measure {
            let tally = DecodeLoops.decodeAll(buffer)
            if tally != expected { decodeMismatch = tally }
        }
        if let wrong = decodeMismatch {
            throw ValidationError("decode round produced \(wrong), expected \(expected)")
        }

        let ranges = DecodeLoops.advertisingDataRanges(buffer)
        var parseMismatch: Int?
        let parseTimes = timer.measure {
            let tally = DecodeLoops.parseAll(buffer.bytes, advertisingData: ranges)
            if tally.iBeacons != expected.iBeacons { parseMismatch = tally.iBeacons }
        }
        if let wrong = parseMismatch {
            throw ValidationError("parse round found \(wrong) iBeacons, expected \(expected.iBeacons)")
        }

        let result = DecodeBenchmarkResult(
            distinctEvents: frames.events.count,
            sources: frames.sources.map { .init(file: $0.file, events: $0.events) },
            bufferBytes: buffer.bytes.count, perRound: expected,
            advertisingDataPerRound: ranges.count,
            decode: .init(rounds: decodeTimes.rounds, secondsMedian: decodeTimes.median,
                          eventsPerSecond: decodeTimes.rates(perRound: expected.events),
                          reportsPerSecond: decodeTimes.rates(perRound: expected.reports)),
            parse: .init(rounds: parseTimes.rounds, secondsMedian: parseTimes.median,
                         parsesPerSecond: parseTimes.rates(perRound: ranges.count)))
        if json {
            try JSONOutput.print(result)
        } else {
            print(result.text)
        }
    }

    /// What every round must produce, computed per distinct event and multiplied by how often
    /// the event occurs in the buffer, independently of the timed loop's own totals.
    static func expectedTally(of events: [[UInt8]], in buffer: EventBuffer) -> DecodeTally {
        zip(events, buffer.occurrences).reduce(DecodeTally()) { total, pair in
            total + DecodeLoops.decodeAll(EventBuffer(repeating: [pair.0], count: 1)) * pair.1
        }
    }
}
