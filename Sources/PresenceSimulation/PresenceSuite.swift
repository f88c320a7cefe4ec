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
        /// dB per wall of the simulated floor.
        public var wallLoss = 5.0
        /// The scenario whose seed this one's trace takes, so both have the same walkers and receivers (nil: its own).
        public var walkersOf: Int? = nil
        /// Whether the radio is the real flat's (`RadioEnvironment.realFlat`): the issues' simulated targets were set
        /// on the plain radio before the real flat showed it kind, and hold there only.
        public var realRadio = false
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
        ] + fleetScenarios + realRadioScenarios

    /// The simulated floor with the real flat's radio: what the plain radio's 91–99 % becomes when only the radio is
    /// made real (the walk and the floor stay the simulator's).
    public static let realRadioScenarios = [
        Scenario(
            name: "the real flat's radio (fitted on survey.csv): σ 6.7 dB, room, place and fading parts, 9.5 % misses; offsets ±10 dB",
            radio: .realFlat, interval: 1...1, offsets: 10, offline: false, wallLoss: RadioEnvironment.realFlatWallLoss,
            walkersOf: 0, realRadio: true)
    ]

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
        let plan = SimulatedFloor.grid(columns: 3, rows: 2, size: 5, wallLoss: scenario.wallLoss)
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
            let stops = stays(rooms: plan.rooms.count, hours: hours, random: &random) { _, x, y in Point(x: x, y: y) }
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

    /// A walker's stops for `hours`: stays of 1–15 min in a room, away 15 % of its stops for 5–30 min. `spot` turns
    /// a draw in −2…2 m on each axis into where in the room (from its centre) it stays.
    static func stays(rooms: Int, hours: Double, random: inout SeededRandom, spot: (Int, Double, Double) -> Point) -> [SimulatedBeacon.Stop] {
        var stops: [SimulatedBeacon.Stop] = []
        var time = 0.0
        while time < hours * 3600 {
            let away = random.uniform(in: 0..<1) < 0.15
            let dwell = away ? random.uniform(in: 300..<1800) : random.uniform(in: 60..<900)
            let (x, y) = (random.uniform(in: -2..<2), random.uniform(in: -2..<2))
            // No room drawn for an away stop: the draws stay those the suite's traces were made with.
            let room = away ? nil : Int(random.uniform(in: 0..<(Double(rooms) - 0.001)))
            stops.append(.init(room: room, dwell: dwell, offset: room.map { spot($0, x, y) } ?? Point(x: x, y: y)))
            time += dwell
        }
        return stops
    }

    /// The real flat's rooms and receivers (at their heights, with the RSSI at one metre `radio` fitted to each) and
    /// its radio, with `beacons` people walking room to room as the simulated floor's do: stays of 1–15 min at a
    /// spot at least 0.3 m inside a room, away 15 % of their stops. What the simulator says of the real flat for
    /// people rather than a robot.
    public static func flatTrace(_ survey: SurveyFlat, radio fitted: SurveyRadio, hours: Double, beacons: Int, seed: UInt64) -> SimulatedTrace {
        let plan = SimulatedFloor(
            rooms: survey.rooms.map { Room(name: $0.name, minimum: Point(x: $0.x0, y: $0.y0), maximum: Point(x: $0.x1, y: $0.y1)) },
            wallLoss: fitted.wallLoss)
        let power = fitted.receiverPower.reduce(0, +) / Double(max(fitted.receiverPower.count, 1))
        let receivers = survey.receivers.enumerated().map { index, receiver in
            SimulatedReceiver(
                name: "receiver \(receiver.id)", position: Point(x: receiver.x, y: receiver.y),
                rssiOffset: fitted.receiverPower[index] - power, height: receiver.z - SurveyFlat.tagHeight)
        }
        var random = SeededRandom(seed: seed ^ 0xF1A7_0000_0000_0000)
        let people = (0..<beacons).map { number in
            // A spot at least 0.3 m inside its room.
            let stops = stays(rooms: plan.rooms.count, hours: hours, random: &random) { room, x, y in
                let (width, depth) = (
                    plan.rooms[room].maximum.x - plan.rooms[room].minimum.x, plan.rooms[room].maximum.y - plan.rooms[room].minimum.y
                )
                return Point(x: x / 2 * (width / 2 - 0.3), y: y / 2 * (depth / 2 - 0.3))
            }
            // The survey's tag: its RSSI at one metre is what the fit found, whatever the rules assume.
            return SimulatedBeacon(name: "person\(number)", advertisingInterval: 1, measuredPower: power, stops: stops)
        }
        return Simulator.run(plan: plan, receivers: receivers, beacons: people, radio: RadioEnvironment(fitted: fitted), seed: seed)
    }

    public static let flatPeopleName = "the real flat's plan, receivers and radio (fitted on survey.csv): people walking room to room"

    /// Each receiver fitted from a reference beacon at 1 m and at 4 m (30 readings each), as `beaconctl calibrate` does.
    public static func calibrations(_ trace: SimulatedTrace, radio: RadioEnvironment, seed: UInt64) -> [ReceiverCalibration] {
        trace.receivers.enumerated().map { index, receiver in
            let samples = Simulator.referenceSamples(for: receiver, distances: [1, 4], radio: radio, seed: seed &+ UInt64(index) &* 7919)
            return (try? CalibrationFit.fit(samples).calibration) ?? .uncalibrated
        }
    }

    public static let beacondName = "beacond"

    /// The real flat's rows: one fold of the survey drive's minutes, calibrated on the other.
    public static func surveyName(fold: String, fittedOn other: String) -> String {
        "real flat (survey.csv), the drive's \(fold) minutes; calibrated on the \(other) minutes"
    }
    /// The simulator walking the drive's path with the radio fitted on one fold (`SurveyRadio`), judged on the other.
    public static func simulatedSurveyName(fold: String, fittedOn other: String) -> String {
        "simulated flat: the drive's \(fold) minutes, radio fitted on the \(other) minutes"
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
            let trace = trace(scenario, hours: hours, beacons: beacons, seed: seed &+ UInt64(scenario.variantOf ?? scenario.walkersOf ?? number))
            runs.append((scenario.name, trace, calibrations(trace, radio: scenario.radio, seed: seed), scenario.roomRegions, nil))
        }
        if let fixtures {
            for timeline in [RecordedTimeline.starksm64FullPower, .starksm64LowPower] {
                runs.append((timeline.name, try timeline.trace(directory: fixtures), nil, false, nil))
            }
        }
        if let survey {
            let radio = survey.radio(fittedOn: survey.rows.indices)
            let people = flatTrace(survey, radio: radio, hours: hours, beacons: beacons, seed: seed)
            runs.append(
                (flatPeopleName, people, calibrations(people, radio: RadioEnvironment(fitted: radio), seed: seed), false, survey.receiverRooms))
            // Each fold of the drive's minutes judged with calibrations (and, simulated, the radio) fitted on the
            // other: never on the rows fitted. The whole drive is replayed; only the fold's minutes are scored.
            let (even, odd) = survey.folds
            for (fold, name, other, fitted) in [(0, "even", "odd", odd), (1, "odd", "even", even)] {
                let scored = { survey.fold(of: $0) == fold }
                let calibrations = survey.calibrations(fittedOn: fitted)
                runs.append((Self.surveyName(fold: name, fittedOn: other), survey.trace(scored: scored), calibrations, false, survey.receiverRooms))
                let simulated = survey.simulated(survey.rows.indices, radio: survey.radio(fittedOn: fitted), seed: seed)
                runs.append(
                    (
                        Self.simulatedSurveyName(fold: name, fittedOn: other), simulated.trace(scored: scored), calibrations, false,
                        survey.receiverRooms
                    ))
            }
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
