import Foundation

/// The figures `beacond-bench decode` prints (`--json` for scripts/bench/compare.sh).
struct DecodeBenchmarkResult: Codable {
    struct Source: Codable {
        var file: String
        var events: Int
    }

    /// One timed workload: items are HCI events for the decoder, AD blocks for the parser.
    struct Timing: Codable {
        var rounds: Int
        var itemsPerRound: Int
        var iBeaconsPerRound: Int
        var secondsMedian: Double
        var itemsPerSecond: Rates
        var reportsPerSecond: Rates?

        init(_ times: RoundTimes, items: Int, reports: Int?, iBeacons: Int) {
            rounds = times.rounds
            itemsPerRound = items
            iBeaconsPerRound = iBeacons
            secondsMedian = times.median
            itemsPerSecond = times.rates(perRound: items)
            reportsPerSecond = reports.map { times.rates(perRound: $0) }
        }
    }

    var distinctEvents: Int
    var sources: [Source]
    var bufferBytes: Int
    /// Totals of one streaming round, verified after every round.
    var perRound: DecodeTally
    /// How many times a hot round loops over the distinct events.
    var hotPasses: Int
    /// Streaming: the large mixed buffer, read once per round.
    var decode: Timing
    var parse: Timing
    /// Hot: the distinct frames looped `hotPasses` times per round, as the Python peers are timed.
    var decodeHot: Timing
    var parseHot: Timing

    var text: String {
        let files = sources.map { "  \($0.file): \($0.events) LE Meta events" }
        let rows: [(String, Timing)] = [
            ("decode, streaming  HCIEventDecoder.decode(event:)        events/s ", decode),
            ("                                                         reports/s", decode),
            ("parse, streaming   BeaconFrameParser.beacon(advertisingData:) AD/s", parse),
            ("decode, hot        HCIEventDecoder.decode(event:)        events/s ", decodeHot),
            ("parse, hot         BeaconFrameParser.beacon(advertisingData:) AD/s", parseHot),
        ]
        let table = rows.enumerated().map { index, row in
            let rates = index == 1 ? (row.1.reportsPerSecond ?? row.1.itemsPerSecond) : row.1.itemsPerSecond
            return "\(row.0) min \(mega(rates.min))  median \(mega(rates.median))  max \(mega(rates.max))"
                + (index == 1 ? "" : "  (\(row.1.rounds) rounds of \(row.1.itemsPerRound), median \(millis(row.1.secondsMedian)))")
        }
        return
            (["corpus: \(distinctEvents) distinct LE Meta events"] + files + [
                "streaming buffer: \(perRound.events) events, \(String(format: "%.1f", Double(bufferBytes) / 1e6)) MB; "
                    + "per round \(perRound.advertisingEvents) advertising events, \(perRound.reports) reports, "
                    + "\(perRound.iBeacons) iBeacons, \(perRound.malformed) malformed (verified every round)",
                "hot: the \(distinctEvents) distinct events looped \(hotPasses) times per round (verified every round)",
                "",
            ] + table).joined(separator: "\n")
    }

    private func mega(_ rate: Double) -> String { String(format: "%7.2f M", rate / 1e6) }
    private func millis(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1e3) }
}
