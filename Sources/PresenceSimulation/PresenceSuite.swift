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
        /// A variant: the trace of scenario `variantOf` (its seed too, so the two rows score one trace), then
        /// `fleet` applied to it.
        public var variantOf: Int? = nil
        public var fleet = FleetConditions()
        /// Whether beacond's (uncalibrated) row monitors a region per room too, for the room-exit columns: on the
        /// traces a target reads them from (typical, and those with a receiver offline); "-" elsewhere, where they
        /// would only slow the suite.
        public var roomRegions = false
    }

    /// What a fleet of Wi-Fi receivers adds to a trace (`SimulatedTrace.withLossBursts`, `withReceiverOffline`,
    /// `withReadingLatency`, in that order).
    public struct FleetConditions: Sendable {
        public var latency: ClosedRange<Double>? = nil
        public var bursts: LossBursts? = nil
        public var offline: OfflineSchedule? = nil
    }

    /// ESPresense nodes on Wi-Fi deliver readings 5–60 ms after the advertisement.
    public static let wifiLatency = 0.005...0.060

    public static let scenarios =
        [
            Scenario(
                name: "typical: σ 4 dB, 20 % loss, offsets ±10 dB, 1 s adverts", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                interval: 1...1, offsets: 10, offline: false, roomRegions: true),
            Scenario(
                name: "noisy: σ 6 dB, 50 % loss, offsets ±10 dB, 1 s adverts", radio: RadioEnvironment(shadowing: 6, packetLoss: 0.5),
                interval: 1...1, offsets: 10, offline: false),
            Scenario(
                name: "slow tags: adverts every 0.1–30 s, σ 4 dB, 20 % loss", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                interval: 0.1...30, offsets: 10, offline: false),
            Scenario(
                name: "a receiver offline for 10 min of each hour, σ 4 dB, 20 % loss", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                interval: 1...1, offsets: 10, offline: true, roomRegions: true),
        ] + fleetScenarios

    /// The fleet variants: each is an earlier scenario's trace (the row to compare it with) as Wi-Fi receivers deliver
    /// it.
    public static let fleetScenarios = [
        Scenario(
            name: "Wi-Fi latency: the typical trace, each reading 5–60 ms late, out of order",
            radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
            interval: 1...1, offsets: 10, offline: false, variantOf: 0, fleet: FleetConditions(latency: wifiLatency)),
        Scenario(
            name: "Wi-Fi latency: the slow-tag trace, each reading 5–60 ms late, out of order",
            radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
            interval: 0.1...30, offsets: 10, offline: false, variantOf: 2, fleet: FleetConditions(latency: wifiLatency)),
        Scenario(
            name: "loss bursts: the typical trace, each receiver–beacon link blocked ~5 s in 35",
            radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
            interval: 1...1, offsets: 10, offline: false, variantOf: 0,
            fleet: FleetConditions(bursts: LossBursts(meanGood: 30, meanBad: 5, lossWhileBad: 0.95))),
        Scenario(
            name: "the typical trace with room0's receiver offline 5 min in 10 while beacons walk elsewhere",
            radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
            interval: 1...1, offsets: 10, offline: false, variantOf: 0,
            fleet: FleetConditions(offline: OfflineSchedule(receiver: 0, period: 600, duration: 300, phase: 120)),
            roomRegions: true),
    ]

    /// beacond as the evaluation runs it: the default room settings, adaptive exits from 2 s to 180 s at
    /// exit_chance 0.001.
    public static func beacondMonitoring(minimum: Double = 2, maximum: Double = 180, chance: Double = 1e-3) throws -> MonitoringConfiguration {
        try MonitoringConfiguration(
            exitTimeout: .milliseconds(Int64(maximum * 1000)),
            adaptiveExit: AdaptiveExit(minimum: .milliseconds(Int64(minimum * 1000)), chance: chance))
    }

    /// A 3 × 2 floor of 5 m rooms, a receiver in each room's centre with an offset of ±`offsets` dB; `beacons` walkers
    /// dwelling 1–15 min anywhere in a room (at least 0.5 m from its walls), away 15 % of their stops for 5–30 min.
    public static func trace(_ scenario: Scenario, hours: Double, beacons: Int, seed: UInt64) -> SimulatedTrace {
        let plan = FloorPlan.grid(columns: 3, rows: 2, size: 5, wallLoss: 5)
        var random = SeededRandom(seed: seed ^ 0x5EED_F100_0000_0000)
        let receivers = plan.rooms.indices.map { index in
            let offline: [Range<Double>] =
                scenario.offline && index == 0
                ? stride(from: 1200.0, to: hours * 3600, by: 3600).map { $0..<($0 + 600) } : []
            return SimulatedReceiver(
                name: plan.rooms[index].name, position: plan.rooms[index].centre,
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
            let interval =
                scenario.interval.lowerBound == scenario.interval.upperBound
                ? scenario.interval.lowerBound : [0.1, 1, 5, 10, 30][number % 5]
            return SimulatedBeacon(name: "beacon\(number)", advertisingInterval: interval, stops: stops)
        }
        var trace = Simulator.run(plan: plan, receivers: receivers, beacons: walkers, radio: scenario.radio, seed: seed)
        if let bursts = scenario.fleet.bursts { trace = trace.withLossBursts(bursts, seed: seed) }
        if let offline = scenario.fleet.offline { trace = trace.withReceiverOffline(offline) }
        if let latency = scenario.fleet.latency { trace = trace.withReadingLatency(latency, seed: seed) }
        return trace
    }

    /// Each receiver fitted from a reference beacon at 1 m and at 4 m (30 readings each), as `beaconctl calibrate` does.
    public static func calibrations(_ trace: SimulatedTrace, radio: RadioEnvironment, seed: UInt64) -> [ReceiverCalibration] {
        trace.receivers.enumerated().map { index, receiver in
            let samples = Simulator.referenceSamples(for: receiver, distances: [1, 4], radio: radio, seed: seed &+ UInt64(index) &* 7919)
            return (try? CalibrationFit.fit(samples).calibration) ?? .uncalibrated
        }
    }

    public static let beacondName = "beacond"

    /// The real flat's rows: one half of the survey drive, calibrated on the other.
    public static func surveyName(half: String, fittedOn other: String) -> String {
        "real flat (survey.csv), \(half) half of the drive; calibrated on the \(other) half"
    }
    public static let calibratedName = "beacond, receivers calibrated (beaconctl calibrate)"

    /// Every algorithm for a trace whose receivers are in `rooms`: beacond (and calibrated, when `calibrations` are
    /// given), then the peers.
    public static func algorithms(
        rooms: [Int], room: RoomConfiguration, monitoring: MonitoringConfiguration,
        calibrations: [ReceiverCalibration]?, beacondOnly: Bool = false,
        roomRegions: Bool = true
    ) -> [any PresenceAlgorithm] {
        var algorithms: [any PresenceAlgorithm] = [
            BeacondRule(
                name: beacondName, rooms: rooms, room: room, monitoring: monitoring,
                roomRegions: roomRegions)
        ]
        if let calibrations {
            algorithms.append(
                BeacondRule(
                    name: calibratedName, rooms: rooms, room: room, monitoring: monitoring,
                    calibrations: calibrations, roomRegions: false))
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
    public struct Row: Encodable, Sendable {
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
        /// From each departure from a room (the beacon crossing its wall, or going away) to the rule saying it left
        /// that room: beacond's room region (`BeaconRegion.room`) outside, a peer's answer another room or away.
        public var roomExitDelayMedian: Double?
        public var roomExitDelayP95: Double?
        public var missedRoomExits: Int
        /// Every departure (from the building, and from each room), for comparing rows departure by departure.
        public var exits: [ExitRecord]
        public var roomExits: [ExitRecord]
        /// Each beacon's advertising interval, seconds (empty on recorded runs).
        public var advertisingIntervals: [Double]

        /// The JSON (`beacond-bench presence --json`) has the figures, not every departure.
        enum CodingKeys: String, CodingKey {
            case scenario, algorithm, correctRoomRate, flapsPerHour, truthRoomChangesPerHour, falseExitsPerHour,
                exitDelayMedian, exitDelayP95, missedExits, unknownShare, roomExitDelayMedian, roomExitDelayP95, missedRoomExits
        }

        init(scenario: String, algorithm: String, score: PresenceScore, advertisingIntervals: [Double]) {
            self.scenario = scenario
            self.algorithm = algorithm
            correctRoomRate = score.correctRoomRate
            flapsPerHour = score.flapsPerHour
            truthRoomChangesPerHour = score.truthRoomChangesPerHour
            falseExitsPerHour = score.falseExitsPerHour
            exitDelayMedian = score.exitDelay(quantile: 0.5)
            exitDelayP95 = score.exitDelay(quantile: 0.95)
            missedExits = score.missedExits
            unknownShare = score.unknownShare
            roomExitDelayMedian = score.roomExitDelay(quantile: 0.5)
            roomExitDelayP95 = score.roomExitDelay(quantile: 0.95)
            missedRoomExits = score.missedRoomExits
            exits = score.exits
            roomExits = score.roomExits
            self.advertisingIntervals = advertisingIntervals
        }
    }

    /// The whole table: every simulated scenario (`hours`, `beacons`, `seed`), then each recorded run found in
    /// `fixtures` (nil: none).
    public static func table(
        hours: Double, beacons: Int, seed: UInt64, room: RoomConfiguration, monitoring: MonitoringConfiguration,
        fixtures: String?, survey: SurveyFlat? = nil, beacondOnly: Bool = false
    ) throws -> [Row] {
        var runs: [(name: String, trace: SimulatedTrace, calibrations: [ReceiverCalibration]?, roomRegions: Bool, rooms: [Int]?)] = []
        for (number, scenario) in scenarios.enumerated() {
            let trace = trace(scenario, hours: hours, beacons: beacons, seed: seed &+ UInt64(scenario.variantOf ?? number))
            runs.append((scenario.name, trace, calibrations(trace, radio: scenario.radio, seed: seed), scenario.roomRegions, nil))
        }
        if let fixtures {
            for timeline in [RecordedTimeline.starksm64FullPower, .starksm64LowPower] {
                runs.append((timeline.name, try timeline.trace(directory: fixtures), nil, false, nil))
            }
        }
        if let survey {
            // Judged on one half of the drive, calibrated on the other: never on the rows fitted.
            let (first, second) = survey.halves
            runs.append(
                (
                    Self.surveyName(half: "first", fittedOn: "second"), survey.trace(first),
                    survey.calibrations(fittedOn: second), false, survey.receiverRooms
                ))
            runs.append(
                (
                    Self.surveyName(half: "second", fittedOn: "first"), survey.trace(second),
                    survey.calibrations(fittedOn: first), false, survey.receiverRooms
                ))
        }
        var rows: [Row] = []
        for run in runs {
            var algorithms = algorithms(
                rooms: run.rooms ?? Array(run.trace.receivers.indices), room: room, monitoring: monitoring,
                calibrations: run.calibrations, beacondOnly: beacondOnly, roomRegions: run.roomRegions)
            for index in algorithms.indices {
                let score = score(&algorithms[index], run.trace)
                rows.append(
                    Row(
                        scenario: run.name, algorithm: algorithms[index].name, score: score,
                        advertisingIntervals: run.trace.advertisingIntervals))
            }
        }
        return rows
    }
}
