import ArgumentParser
import BeaconKit
import Foundation

/// `beacond-bench decode`: single-core throughput of the HCI advertising decoder and of the
/// iBeacon parser alone, on real frames from the corpus. Two settings:
/// - streaming: the corpus mixed into one large in-memory capture (`--events`), read once per
///   round, as the daemon reads a socket or a capture file;
/// - hot: the distinct frames alone, looped until a round holds as many items, which is exactly
///   how scripts/bench/python_peers.py times the Python parsers.
/// Targets (docs/performance.md): ≥ 10 million events/s on one core; ≥ 50× the faster Python peer.
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

    @Option(
        name: .customLong("dump-frames"),
        help: ArgumentHelp(
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
        let timer = RoundTimer(budget: .milliseconds(Int(seconds * 1000)))
        let streaming = EventBuffer(repeating: frames.events, count: events)
        let hot = EventBuffer(repeating: frames.events, count: frames.events.count)
        let passes = max(1, events / frames.events.count)
        let streamingTally = Self.expectedTally(of: frames.events, in: streaming)
        let hotTally = Self.expectedTally(of: frames.events, in: hot) * passes

        let result = DecodeBenchmarkResult(
            distinctEvents: frames.events.count,
            sources: frames.sources.map { .init(file: $0.file, events: $0.events) },
            bufferBytes: streaming.bytes.count, perRound: streamingTally, hotPasses: passes,
            decode: try Self.timeDecode(streaming, passes: 1, expected: streamingTally, timer),
            parse: try Self.timeParse(streaming, passes: 1, expected: streamingTally, timer),
            decodeHot: try Self.timeDecode(hot, passes: passes, expected: hotTally, timer),
            parseHot: try Self.timeParse(hot, passes: passes, expected: hotTally, timer))
        if json {
            try JSONOutput.print(result)
        } else {
            print(result.text)
        }
    }

    /// Every round must reproduce `expected` exactly, checksum included.
    static func timeDecode(
        _ buffer: EventBuffer, passes: Int, expected: DecodeTally,
        _ timer: RoundTimer
    ) throws -> DecodeBenchmarkResult.Timing {
        var mismatch: DecodeTally?
        let times = timer.measure {
            let tally = DecodeLoops.decodeAll(buffer, passes: passes)
            if tally != expected { mismatch = tally }
        }
        if let wrong = mismatch { throw ValidationError("decode round produced \(wrong), expected \(expected)") }
        return .init(times, items: expected.events, reports: expected.reports, iBeacons: expected.iBeacons)
    }

    /// The parser must find the iBeacons the decoder found, in every round.
    static func timeParse(
        _ buffer: EventBuffer, passes: Int, expected: DecodeTally,
        _ timer: RoundTimer
    ) throws -> DecodeBenchmarkResult.Timing {
        let ranges = DecodeLoops.advertisingDataRanges(buffer)
        var mismatch: DecodeTally?
        let times = timer.measure {
            let tally = DecodeLoops.parseAll(buffer.bytes, advertisingData: ranges, passes: passes)
            if tally.iBeacons != expected.iBeacons || tally.reports != ranges.count * passes { mismatch = tally }
        }
        if let wrong = mismatch {
            throw ValidationError(
                "parse round found \(wrong.iBeacons) iBeacons in \(wrong.reports) AD blocks, "
                    + "expected \(expected.iBeacons) in \(ranges.count * passes)")
        }
        return .init(times, items: ranges.count * passes, reports: nil, iBeacons: expected.iBeacons)
    }

    /// What every round must produce, computed per distinct event and multiplied by how often
    /// the event occurs in the buffer, independently of the timed loop's own totals.
    static func expectedTally(of events: [[UInt8]], in buffer: EventBuffer) -> DecodeTally {
        zip(events, buffer.occurrences).reduce(DecodeTally()) { total, pair in
            total + DecodeLoops.decodeAll(EventBuffer(repeating: [pair.0], count: 1)) * pair.1
        }
    }
}
