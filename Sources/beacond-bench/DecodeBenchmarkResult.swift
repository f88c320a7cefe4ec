import Foundation

/// The figures `beacond-bench decode` prints (`--json` for scripts/bench/compare.sh).
struct DecodeBenchmarkResult: Codable {
    struct Source: Codable {
        var file: String
        var events: Int
    }

    struct Decode: Codable {
        var rounds: Int
        var secondsMedian: Double
        var eventsPerSecond: Rates
        var reportsPerSecond: Rates
    }

    struct Parse: Codable {
        var rounds: Int
        var secondsMedian: Double
        var parsesPerSecond: Rates
    }

    var distinctEvents: Int
    var sources: [Source]
    var bufferBytes: Int
    /// Totals of one round, verified after every round.
    var perRound: DecodeTally
    var advertisingDataPerRound: Int
    var decode: Decode
    var parse: Parse

    var text: String {
        let files = sources.map { "  \($0.file): \($0.events) LE Meta events" }
        return ([
            "corpus: \(distinctEvents) distinct LE Meta events",
        ] + files + [
            "buffer: \(perRound.events) events, \(String(format: "%.1f", Double(bufferBytes) / 1e6)) MB; per round "
                + "\(perRound.advertisingEvents) advertising events, \(perRound.reports) reports, "
                + "\(perRound.iBeacons) iBeacons, \(perRound.malformed) malformed (verified every round)",
            "",
            "HCIEventDecoder.decode(event:)        \(decode.rounds) rounds, median \(millis(decode.secondsMedian))",
            "  events/s   min \(mega(decode.eventsPerSecond.min))  median \(mega(decode.eventsPerSecond.median))  "
                + "max \(mega(decode.eventsPerSecond.max))",
            "  reports/s  min \(mega(decode.reportsPerSecond.min))  median \(mega(decode.reportsPerSecond.median))  "
                + "max \(mega(decode.reportsPerSecond.max))",
            "IBeaconParser.parse(advertisingData:) \(parse.rounds) rounds, median \(millis(parse.secondsMedian)), "
                + "\(advertisingDataPerRound) AD blocks per round",
            "  parses/s   min \(mega(parse.parsesPerSecond.min))  median \(mega(parse.parsesPerSecond.median))  "
                + "max \(mega(parse.parsesPerSecond.max))",
        ]).joined(separator: "\n")
    }

    private func mega(_ rate: Double) -> String { String(format: "%7.2f M", rate / 1e6) }
    private func millis(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1e3) }
}
