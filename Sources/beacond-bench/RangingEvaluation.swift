import ArgumentParser
import BeaconKit
import Foundation

/// `beacond-bench ranging-eval`: how far each distance model × RSSI filter is from the true distance
/// on the Herald project's RSSI-versus-distance recordings. Prints a markdown report (pasted into
/// docs/ranging.md) and writes a down-sampled CSV of (true, estimated) pairs for
/// scripts/plot-ranging.py.
struct RangingEvaluation: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ranging-eval",
        abstract: "Distance model × RSSI filter error against measured RSSI-versus-distance recordings.")

    @Option(help: "Directory with the Herald recordings, metadata.csv and phones.csv.")
    var corpus = "Tests/Fixtures/corpus/herald-rssi-distance"

    @Option(help: "Where to write the down-sampled CSV (true_m, estimated_m, model, filter, receiver).")
    var samples = ".build-ranging-eval/ranging-samples.csv"

    @Option(help: "Keep every Nth row of each recording in the samples CSV.")
    var every = 20

    @Option(help: "Also write the markdown report to this file.")
    var report: String?

    /// The filters, as the ranger would run them, with AltBeacon's defaults.
    static let filters: [(name: String, kind: RSSIFilterKind)] = [
        ("raw", .latest), ("running average 20 s", .runningAverage), ("ARMA 0.1", .arma),
    ]

    /// Upper edges of the true-distance bands, in metres (the last band is open).
    static let bandEdges = [0.5, 1, 2, 3]
    static let bandNames = ["0–0.5 m", "0.5–1 m", "1–2 m", "2–3 m", "> 3 m"]

    func run() throws {
        guard every > 0 else { throw ValidationError("--every must be at least 1") }
        let recordings = try HeraldRecording.loadAll(from: URL(fileURLWithPath: corpus))
        guard !recordings.isEmpty else { throw ValidationError("no recordings in \(corpus)") }
        let powers = try recordings.map { recording in
            guard let power = recording.measuredPowerAtOneMetre else {
                throw EvaluationError("\(recording.file) has no rows at 100 cm to calibrate against")
            }
            return power
        }
        // Each recording's fitted exponent comes from the *other* recordings, so the fitted model is
        // never scored on the data it was fitted to.
        let fittedExponents = recordings.indices.map { held in
            Self.fittedPathLossExponent(recordings.indices.filter { $0 != held }.map { (recordings[$0], powers[$0]) })
        }

        var scores = Scores(recordings: recordings.count)
        var csv = "true_m,estimated_m,model,filter,receiver\n"
        for (recordingIndex, recording) in recordings.enumerated() {
            let models = Self.models(fittedExponent: fittedExponents[recordingIndex])
            var rowNumber = 0
            for stop in recording.stops {
                // A fresh filter at every stop: the rig moved, and the recordings drop the ±30 s
                // around each move, so samples of different stops are not a continuous signal.
                var filters = Self.filters.map { $0.kind.makeFilter() }
                for row in stop {
                    let sampled = rowNumber % every == 0
                    rowNumber += 1
                    for filterIndex in filters.indices {
                        filters[filterIndex].add(row.rssi, at: row.time)
                        let smoothed = filters[filterIndex].smoothedRSSI(at: row.time)
                        for (modelIndex, model) in models.enumerated() {
                            let estimate = model.model.accuracy(rssi: smoothed, measuredPower: powers[recordingIndex])
                            scores.add(
                                estimate: estimate, truth: row.distance, model: modelIndex,
                                filter: filterIndex, recording: recordingIndex)
                            if sampled && estimate >= 0 {
                                csv +=
                                    "\(row.distance),\(Statistics.format(estimate, decimals: 4)),"
                                    + "\(model.name),\(Self.filters[filterIndex].name),\(recording.receiver)\n"
                            }
                        }
                    }
                }
            }
        }

        let samplesURL = URL(fileURLWithPath: samples)
        try FileManager.default.createDirectory(
            at: samplesURL.deletingLastPathComponent(),
            withIntermediateDirectories: true)
        try csv.write(to: samplesURL, atomically: true, encoding: .utf8)

        let text = Self.markdown(
            recordings: recordings, powers: powers, fittedExponents: fittedExponents,
            scores: scores)
        print(text, terminator: "")
        if let report { try text.write(toFile: report, atomically: true, encoding: .utf8) }
    }

    static func models(fittedExponent: Double) -> [(name: String, model: DistanceModel)] {
        [
            ("AltBeacon Nexus 5 curve", .altBeacon),
            ("Home Assistant curve", .homeAssistant),
            ("log-distance n=2", .freeSpaceLogDistance),
            ("log-distance fitted n", .logDistance(pathLossExponent: fittedExponent)),
        ]
    }

    /// The path-loss exponent that best predicts log10(distance) from raw RSSI by least squares
    /// through the calibration point: log10(d) = (power − rssi) / (10 · n). Rows under 10 cm are left
    /// out (the model has no meaning at 0 cm).
    static func fittedPathLossExponent(_ recordings: [(HeraldRecording, Int)]) -> Double {
        var sumXX = 0.0
        var sumXY = 0.0
        for (recording, power) in recordings {
            for row in recording.rows where row.distance >= 0.1 {
                let x = Double(power - row.rssi) / 10
                sumXX += x * x
                sumXY += x * log10(row.distance)
            }
        }
        return sumXY > 0 ? sumXX / sumXY : DistanceModel.defaultPathLossExponent
    }

    static func band(of distance: Double) -> Int {
        bandEdges.firstIndex { distance < $0 } ?? bandEdges.count
    }
}

/// Signed errors (estimate − truth) and proximity outcomes, kept per model × filter × band × recording
/// so the report can weigh samples or recordings equally.
struct Scores {
    struct Cell: Hashable {
        var model: Int
        var filter: Int
        var band: Int
        var recording: Int
    }

    struct ProximityCell: Hashable {
        var model: Int
        var filter: Int
        var recording: Int
        var truth: BeaconProximity
    }

    let recordings: Int
    private(set) var errors: [Cell: [Double]] = [:]
    /// (samples, samples whose estimated proximity equals the true one).
    private(set) var proximity: [ProximityCell: (total: Int, agreeing: Int)] = [:]
    private(set) var unknown = 0

    init(recordings: Int) { self.recordings = recordings }

    mutating func add(estimate: Double, truth: Double, model: Int, filter: Int, recording: Int) {
        guard estimate >= 0 else {
            unknown += 1
            return
        }
        let cell = Cell(model: model, filter: filter, band: RangingEvaluation.band(of: truth), recording: recording)
        errors[cell, default: []].append(estimate - truth)
        let bands = ProximityThresholds.coreLocationApproximation
        let trueProximity = bands.proximity(forAccuracy: truth)
        let key = ProximityCell(model: model, filter: filter, recording: recording, truth: trueProximity)
        let agrees = bands.proximity(forAccuracy: estimate) == trueProximity
        proximity[key, default: (0, 0)].total += 1
        proximity[key, default: (0, 0)].agreeing += agrees ? 1 : 0
    }

    /// Signed errors of one model × filter in `bands`, grouped by recording.
    func errors(model: Int, filter: Int, bands: [Int]) -> [[Double]] {
        (0..<recordings).map { recording in
            bands.flatMap { errors[Cell(model: model, filter: filter, band: $0, recording: recording)] ?? [] }
        }
    }

    /// Share of samples whose estimated proximity is the true one, each recording weighted equally;
    /// restricted to one true proximity when `truth` is given.
    func proximityAgreement(model: Int, filter: Int, truth: BeaconProximity?) -> Double? {
        var shares: [Double] = []
        for recording in 0..<recordings {
            let classes = truth.map { [$0] } ?? [.immediate, .near, .far]
            var total = 0
            var agreeing = 0
            for truth in classes {
                let counts = proximity[ProximityCell(model: model, filter: filter, recording: recording, truth: truth)]
                total += counts?.total ?? 0
                agreeing += counts?.agreeing ?? 0
            }
            if total > 0 { shares.append(Double(agreeing) / Double(total)) }
        }
        return shares.isEmpty ? nil : shares.reduce(0, +) / Double(shares.count)
    }
}
