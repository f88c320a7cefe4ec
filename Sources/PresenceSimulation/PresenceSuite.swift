public import BeaconKit
import Foundation
import TestKit

/// The evaluation in docs/presence.md: seeded simulated scenarios and the recorded starksm64 runs, every algorithm
/// (beacond's, uncalibrated and calibrated, and the peers') scored on each. `beacond-bench presence` prints it and
/// PresenceTargetTests holds beacond to the targets on it.
public enum PresenceSuite {
    public struct Scenario: Sendable {
        public var name: String
        public var radio: RadioEnvironment
        /// Advertising intervals: one value, or a range meaning the beacons cycle through 0.1, 1, 5, 10 and 30 s.
        public var interval: ClosedRange<Double>
        public var offsets: Double
        public var offline: Bool
    }

    public static let scenarios = [
        Scenario(name: "typical: σ 4 dB, 20 % loss, offsets ±10 dB, 1 s adverts", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                 interval: 1...1, offsets: 10, offline: false),
        Scenario(name: "noisy: σ 6 dB, 50 % loss, offsets ±10 dB, 1 s adverts", radio: RadioEnvironment(shadowing: 6, packetLoss: 0.5),
                 interval: 1...1, offsets: 10, offline: false),
        Scenario(name: "slow tags: adverts every 0.1–30 s, σ 4 dB, 20 % loss", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                 interval: 0.1...30, offsets: 10, offline: false),
        Scenario(name: "a receiver offline for 10 min of each hour, σ 4 dB, 20 % loss", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                 interval: 1...1, offsets: 10, offline: true),
    ]

    /// beacond as the evaluation runs it: the default room settings, adaptive exits from 2 s to 180 s at
    /// exit_chance 0.001.
    public static func beacondMonitoring(minimum: Double = 2, maximum: Double = 180, chance: Double = 1e-3) throws -> MonitoringConfiguration {
        try MonitoringConfiguration(exitTimeout: .milliseconds(Int64(maximum * 1000)),
                                    adaptiveExit: AdaptiveExit(minimum: .milliseconds(Int64(minimum * 1000)), chance: chance))
    }

    /// A 3 × 2 floor of 5 m rooms, a receiver in each room's centre with an offset of ±`offsets` dB; `beacons` walkers
    /// dwelling 1–15 min anywhere in a room (at least 0.5 m from its walls), away 15 % of their stops for 5–30 min.
    public static func trace(_ scenario: Scenario, hours: Double, beacons: Int, seed: UInt64) -> SimulatedTrace {
        let plan = FloorPlan.grid(columns: 3, rows: 2, size: 5, wallLoss: 5)
        var random = SeededRandom(seed: seed ^ 0x5EED_F100_0000_0000)
        let receivers = plan.rooms.indices.map { index in
            let offline: [Range<Double>] = scenario.offline && index == 0
                ? stride(from: 1200.0, to: hours * 3600, by: 3600).map { $0..<($0 + 600) } : []
            return SimulatedReceiver(name: plan.rooms[index].name, position: plan.rooms[index].centre,
                                     rssiOffset: random.uniform(in: -scenario.offsets..<scenario.offsets), offline: offline)
        }
        let walkers = (0..<beacons).map { number in
            var stops: [SimulatedBeacon.Stop] = []
            var time = 0.0
            while time < hours * 3600 {
                let away = random.uniform(in: 0..<1) < 0.15
                let dwell = away ? random.uniform(in: 300..<1800) : random.uniform(in: 60..<900)
                let offset = Point(x: random.uniform(in: -2..<2), y: random.uniform(in: -2..<2))
                stops.append(.init(room: away ? nil : Int(random.uniform(in: 0..<5.999)), dwell: dwell, offset: offset))
                time += dwell
            }
            let interval = scenario.interval.lowerBound == scenario.interval.upperBound
                ? scenario.interval.lowerBound : [0.1, 1, 5, 10, 30][number % 5]
            return SimulatedBeacon(name: "beacon\(number)", advertisingInterval: interval, stops: stops)
        }
        return Simulator.run(plan: plan, receivers: receivers, beacons: walkers, radio: scenario.radio, seed: seed)
    }

    /// Each receiver fitted from a reference beacon at 1 m and at 4 m (30 readings each), as `beaconctl calibrate` does.
    public static func calibrations(_ trace: SimulatedTrace, radio: RadioEnvironment, seed: UInt64) -> [ReceiverCalibration] {
        trace.receivers.enumerated().map { index, receiver in
            let samples = Simulator.referenceSamples(for: receiver, distances: [1, 4], radio: radio, seed: seed &+ UInt64(index) &* 7919)
            return (try? CalibrationFit.fit(samples).calibration) ?? .uncalibrated
        }
    }

    public static let beacondName = "beacond"
    public static let calibratedName = "beacond, receivers calibrated (beaconctl calibrate)"

    /// Every algorithm for a trace whose receivers are in `rooms`: beacond (and calibrated, when `calibrations` are
    /// given), then the peers.
    public static func algorithms(rooms: [Int], room: RoomConfiguration, monitoring: MonitoringConfiguration,
                                  calibrations: [ReceiverCalibration]?, beacondOnly: Bool = false) -> [any PresenceAlgorithm] {
        var algorithms: [any PresenceAlgorithm] = [BeacondRule(name: beacondName, rooms: rooms, room: room, monitoring: monitoring)]
        if let calibrations {
            algorithms.append(BeacondRule(name: calibratedName, rooms: rooms, room: room, monitoring: monitoring,
                                          calibrations: calibrations))
        }
        guard !beacondOnly else { return algorithms }
        return algorithms + [
            BeacondTodayRule(rooms: rooms), RoomAssistantRule(rooms: rooms), ESPresenceMQTTRoomRule(rooms: rooms),
            HomeAssistantRule(rooms: rooms), BermudaRule(rooms: rooms), AltBeaconRule(rooms: rooms),
        ]
    }

    public static func score(_ algorithm: inout any PresenceAlgorithm, _ trace: SimulatedTrace) -> PresenceScore {
        func run<A: PresenceAlgorithm>(_ concrete: inout A) -> PresenceScore { Evaluation.score(&concrete, on: trace) }
        return run(&algorithm)
    }

    /// One row of the table.
    public struct Row: Codable, Sendable {
        public var scenario: String
        public var algorithm: String
        public var correctRoomRate: Double
        public var flapsPerHour: Double
        public var truthRoomChangesPerHour: Double
        public var falseExitsPerHour: Double
        public var exitDelayMedian: Double?
        public var exitDelayP95: Double?
        public var missedExits: Int
        public var unknownShare: Double
    }

    /// The whole table: every simulated scenario (`hours`, `beacons`, `seed`), then each recorded run found in
    /// `fixtures` (nil: none).
    public static func table(hours: Double, beacons: Int, seed: UInt64, room: RoomConfiguration, monitoring: MonitoringConfiguration,
                             fixtures: String?, beacondOnly: Bool = false) throws -> [Row] {
        var runs: [(name: String, trace: SimulatedTrace, calibrations: [ReceiverCalibration]?)] = []
        for (number, scenario) in scenarios.enumerated() {
            let trace = trace(scenario, hours: hours, beacons: beacons, seed: seed &+ UInt64(number))
            runs.append((scenario.name, trace, calibrations(trace, radio: scenario.radio, seed: seed)))
        }
        if let fixtures {
            for timeline in [RecordedTimeline.starksm64FullPower, .starksm64LowPower] {
                runs.append((timeline.name, try timeline.trace(directory: fixtures), nil))
            }
        }
        var rows: [Row] = []
        for run in runs {
            var algorithms = algorithms(rooms: Array(run.trace.receivers.indices), room: room, monitoring: monitoring,
                                        calibrations: run.calibrations, beacondOnly: beacondOnly)
            for index in algorithms.indices {
                let score = score(&algorithms[index], run.trace)
                rows.append(Row(scenario: run.name, algorithm: algorithms[index].name, correctRoomRate: score.correctRoomRate,
                                flapsPerHour: score.flapsPerHour, truthRoomChangesPerHour: score.truthRoomChangesPerHour,
                                falseExitsPerHour: score.falseExitsPerHour, exitDelayMedian: score.exitDelay(quantile: 0.5),
                                exitDelayP95: score.exitDelay(quantile: 0.95), missedExits: score.missedExits,
                                unknownShare: score.unknownShare))
            }
        }
        return rows
    }
}
