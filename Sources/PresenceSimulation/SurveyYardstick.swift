public import BeaconKit

/// Whether the simulator can be trusted on the real flat: the survey drive scored as recorded and as the simulator
/// reads the same path through the radio fitted on the survey (`SurveyRadio`), over several seeds. Each fold of the
/// drive's minutes is judged with the radio and calibrations fitted on the other fold, never on the rows fitted.
/// The bar: today's rule within 5 points of the real score before anything is tuned on the simulator again.
public enum SurveyYardstick {
    public struct Comparison: Sendable {
        /// "even" or "odd" minutes, or "drive" for both pooled.
        public var fold: String
        public var algorithm: String
        /// Right room, 0…1.
        public var real: Double
        /// One per seed.
        public var simulated: [Double]
        /// Room flaps per hour, real and one per seed.
        public var realFlaps: Double
        public var simulatedFlaps: [Double]

        public var simulatedMean: Double { simulated.reduce(0, +) / Double(max(simulated.count, 1)) }
        public var simulatedRange: ClosedRange<Double> { (simulated.min() ?? 0)...(simulated.max() ?? 0) }
        public var simulatedFlapsMean: Double { simulatedFlaps.reduce(0, +) / Double(max(simulatedFlaps.count, 1)) }
        /// Simulated minus real, points of right room.
        public var difference: Double { (simulatedMean - real) * 100 }
    }

    /// The rules compared: beacond as built (uncalibrated, and calibrated on the other fold), the plain nearest
    /// distance of room-assistant (the best peer on the real flat), and the loudest receiver of each moment with no
    /// memory at all, which sees the radio's noise undamped: a model with too little or too much noise misses it.
    /// `model` turns the fitted radio into the one simulated (the default: as fitted; an ablation: with a part taken
    /// out, to see what it is worth).
    public static func compare(
        _ survey: SurveyFlat, seeds: [UInt64], room: RoomConfiguration = .default, monitoring: MonitoringConfiguration,
        model: (SurveyRadio) -> SurveyRadio = { $0 }
    ) -> (radios: [(fold: String, radio: SurveyRadio)], comparisons: [Comparison]) {
        let (even, odd) = survey.folds
        var radios: [(String, SurveyRadio)] = []
        var byFold: [[Comparison]] = []
        var weights: [Double] = []
        for (fold, name) in [(0, "even"), (1, "odd")] {
            let fitted = fold == 0 ? odd : even
            let radio = model(survey.radio(fittedOn: fitted))
            radios.append((name, radio))
            let calibrations = survey.calibrations(fittedOn: fitted)
            func rules() -> [any PresenceAlgorithm] {
                Array(
                    PresenceSuite.algorithms(
                        rooms: survey.receiverRooms, room: room, monitoring: monitoring, calibrations: calibrations,
                        roomRegions: false
                    ).prefix(2)) + [RoomAssistantRule(rooms: survey.receiverRooms), LoudestReadingRule(rooms: survey.receiverRooms)]
            }
            // The whole drive, judged on this fold's minutes only: the rules keep their memory across the other
            // fold's minutes, as they would on a drive of their own.
            let scored = { survey.fold(of: $0) == fold }
            weights.append(Double(survey.rows.indices.count { scored($0) && survey.room(x: survey.rows[$0].x, y: survey.rows[$0].y) != nil }))
            var real = rules()
            let realTrace = survey.trace(scored: scored)
            var rows = real.indices.map { index in
                let score = PresenceSuite.score(&real[index], realTrace)
                return Comparison(
                    fold: name, algorithm: real[index].name, real: score.correctRoomRate, simulated: [],
                    realFlaps: score.flapsPerHour, simulatedFlaps: [])
            }
            for seed in seeds {
                let trace = survey.simulated(survey.rows.indices, radio: radio, seed: seed).trace(scored: scored)
                var simulated = rules()
                for index in simulated.indices {
                    let score = PresenceSuite.score(&simulated[index], trace)
                    rows[index].simulated.append(score.correctRoomRate)
                    rows[index].simulatedFlaps.append(score.flapsPerHour)
                }
            }
            byFold.append(rows)
        }
        // The drive: each fold weighted by its judged rows, seed by seed.
        let total = weights.reduce(0, +)
        let pooled = byFold[0].indices.map { index in
            Comparison(
                fold: "drive", algorithm: byFold[0][index].algorithm,
                real: (byFold[0][index].real * weights[0] + byFold[1][index].real * weights[1]) / total,
                simulated: zip(byFold[0][index].simulated, byFold[1][index].simulated).map { ($0 * weights[0] + $1 * weights[1]) / total },
                realFlaps: (byFold[0][index].realFlaps * weights[0] + byFold[1][index].realFlaps * weights[1]) / total,
                simulatedFlaps: zip(byFold[0][index].simulatedFlaps, byFold[1][index].simulatedFlaps).map {
                    ($0 * weights[0] + $1 * weights[1]) / total
                })
        }
        return (radios, byFold[0] + byFold[1] + pooled)
    }
}

/// The room of the receiver with the loudest reading of the latest moment (readings at one time are one moment):
/// no smoothing, no hysteresis. Not a peer's rule: a probe of the radio's noise in the yardstick.
public struct LoudestReadingRule: PresenceAlgorithm {
    public var name: String { "loudest receiver of each moment (no memory)" }
    let rooms: [Int]
    var latest: [Int: (time: Double, rssi: Int, room: Int)] = [:]

    public init(rooms: [Int]) { self.rooms = rooms }

    public mutating func observe(_ reading: SimulatedReading) {
        if let now = latest[reading.beacon], now.time == reading.time, now.rssi >= reading.rssi { return }
        latest[reading.beacon] = (reading.time, reading.rssi, rooms[reading.receiver])
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        latest[beacon].map { .room($0.room) } ?? .away
    }
}
