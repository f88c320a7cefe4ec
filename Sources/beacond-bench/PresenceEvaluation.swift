import ArgumentParser
import BeaconKit
import Foundation
import PresenceSimulation
import TestKit

/// `beacond-bench presence`: the published room and away rules of today's BLE presence systems, and beacond's as
/// built, on the same simulated traces (docs/presence.md): correct-room rate, room flaps, false exits and exit
/// delays against the ground truth. Seeded: the same command prints the same table.
struct PresenceEvaluation: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presence",
        abstract: "Score presence algorithms (beacond's and its peers') on seeded simulated traces.")

    @Option(help: "Seed of the traces.")
    var seed: UInt64 = 1

    @Option(help: "Hours of each trace.")
    var hours = 2.0

    @Option(help: "Beacons walking in each trace.")
    var beacons = 10

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Option(help: "beacond's room margin (0.3: a challenger room must be 30 % nearer).")
    var roomMargin = RoomConfiguration.default.margin

    @Option(help: "beacond's room dwell, seconds.")
    var roomDwell = Double(RoomConfiguration.default.dwell.components.seconds)

    @Option(help: "beacond's exit_chance: chance per hour that a present beacon is wrongly exited.")
    var exitChance = 1e-3

    @Option(help: "beacond's exit_timeout_min, seconds.")
    var exitTimeoutMin = 2.0

    @Option(help: "beacond's exit_timeout, seconds (the longest adaptive exit).")
    var exitTimeout = 180.0

    @Flag(help: "Score beacond's rows only (for sweeping its settings).")
    var beacondOnly = false

    struct Scenario {
        var name: String
        var radio: RadioEnvironment
        var interval: ClosedRange<Double>
        var offsets: Double
        var offline: Bool
    }

    static let scenarios = [
        Scenario(name: "typical: σ 4 dB, 20 % loss, offsets ±10 dB, 1 s adverts", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                 interval: 1...1, offsets: 10, offline: false),
        Scenario(name: "noisy: σ 6 dB, 50 % loss, offsets ±10 dB, 1 s adverts", radio: RadioEnvironment(shadowing: 6, packetLoss: 0.5),
                 interval: 1...1, offsets: 10, offline: false),
        Scenario(name: "slow tags: adverts every 0.1–30 s, σ 4 dB, 20 % loss", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                 interval: 0.1...30, offsets: 10, offline: false),
        Scenario(name: "a receiver offline for 10 min of each hour, σ 4 dB, 20 % loss", radio: RadioEnvironment(shadowing: 4, packetLoss: 0.2),
                 interval: 1...1, offsets: 10, offline: true),
    ]

    struct Row: Codable {
        var scenario: String
        var algorithm: String
        var correctRoomRate: Double
        var flapsPerHour: Double
        var truthRoomChangesPerHour: Double
        var falseExitsPerHour: Double
        var exitDelayMedian: Double?
        var exitDelayP95: Double?
        var missedExits: Int
        var unknownShare: Double
    }

    func validate() throws {
        guard hours > 0, hours <= 48, beacons > 0, beacons <= 200 else {
            throw ValidationError("--hours must be 0 to 48 and --beacons 1 to 200")
        }
    }

    var beacondName: String {
        String(format: "beacond (margin %.0f %%, dwell %g s, exits %g-%g s)", roomMargin * 100, roomDwell, exitTimeoutMin, exitTimeout)
    }

    func roomConfiguration() throws -> RoomConfiguration {
        try RoomConfiguration(margin: roomMargin, dwell: .milliseconds(Int64(roomDwell * 1000)))
    }

    /// What the evaluation runs beacond with: adaptive exits between `exitTimeoutMin` and `exitTimeout`.
    func monitoring() throws -> MonitoringConfiguration {
        try MonitoringConfiguration(exitTimeout: .milliseconds(Int64(exitTimeout * 1000)),
                                    adaptiveExit: AdaptiveExit(minimum: .milliseconds(Int64(exitTimeoutMin * 1000)), chance: exitChance))
    }

    /// Each receiver fitted from a reference beacon at 1 m and at 4 m (30 readings each), as `beaconctl calibrate`
    /// does.
    func calibrations(_ trace: SimulatedTrace, _ scenario: Scenario, seed: UInt64) -> [ReceiverCalibration] {
        trace.receivers.enumerated().map { index, receiver in
            let samples = Simulator.referenceSamples(for: receiver, distances: [1, 4], radio: scenario.radio,
                                                     seed: seed &+ UInt64(index) &* 7919)
            return (try? CalibrationFit.fit(samples).calibration) ?? .uncalibrated
        }
    }

    func trace(_ scenario: Scenario, seed: UInt64) -> SimulatedTrace {
        let plan = FloorPlan.grid(columns: 3, rows: 2, size: 5, wallLoss: 5)
        var random = SplitMixDraws(seed: seed)
        let receivers = plan.rooms.indices.map { index in
            let offline: [Range<Double>] = scenario.offline && index == 0
                ? stride(from: 1200.0, to: hours * 3600, by: 3600).map { $0..<($0 + 600) } : []
            return SimulatedReceiver(name: plan.rooms[index].name, position: plan.rooms[index].centre,
                                     rssiOffset: random.uniform(-scenario.offsets...scenario.offsets), offline: offline)
        }
        let walkers = (0..<beacons).map { number in
            var stops: [SimulatedBeacon.Stop] = []
            var time = 0.0
            while time < hours * 3600 {
                // Mostly rooms, sometimes away; dwell 1–15 min in a room, 5–30 min away.
                let away = random.uniform(0...1) < 0.15
                let dwell = away ? random.uniform(300...1800) : random.uniform(60...900)
                // Anywhere in the room at least 0.5 m from its walls, not on the receiver.
                let offset = Point(x: random.uniform(-2...2), y: random.uniform(-2...2))
                stops.append(.init(room: away ? nil : Int(random.uniform(0...5.999)), dwell: dwell, offset: offset))
                time += dwell
            }
            let interval = scenario.interval.lowerBound == scenario.interval.upperBound
                ? scenario.interval.lowerBound
                : [0.1, 1, 5, 10, 30][number % 5]
            return SimulatedBeacon(name: "beacon\(number)", advertisingInterval: interval, stops: stops)
        }
        return Simulator.run(plan: plan, receivers: receivers, beacons: walkers, radio: scenario.radio, seed: seed)
    }

    mutating func run() throws {
        var rows: [Row] = []
        for (number, scenario) in Self.scenarios.enumerated() {
            let trace = trace(scenario, seed: seed &+ UInt64(number))
            let rooms = Array(0..<6)
            var algorithms: [any PresenceAlgorithm] = [
                BeacondRule(name: beacondName, rooms: rooms, room: try roomConfiguration(), monitoring: try monitoring()),
                BeacondRule(name: "beacond, receivers calibrated (beaconctl calibrate)", rooms: rooms, room: try roomConfiguration(),
                            monitoring: try monitoring(), calibrations: calibrations(trace, scenario, seed: seed)),
                BeacondTodayRule(rooms: rooms), RoomAssistantRule(rooms: rooms), ESPresenceMQTTRoomRule(rooms: rooms),
                HomeAssistantRule(rooms: rooms), BermudaRule(rooms: rooms), AltBeaconRule(rooms: rooms),
            ]
            if beacondOnly { algorithms.removeLast(algorithms.count - 2) }
            for index in algorithms.indices {
                let score = Self.score(&algorithms[index], trace)
                rows.append(Row(scenario: scenario.name, algorithm: algorithms[index].name, correctRoomRate: score.correctRoomRate,
                                flapsPerHour: score.flapsPerHour, truthRoomChangesPerHour: score.truthRoomChangesPerHour,
                                falseExitsPerHour: score.falseExitsPerHour, exitDelayMedian: score.exitDelay(quantile: 0.5),
                                exitDelayP95: score.exitDelay(quantile: 0.95), missedExits: score.missedExits,
                                unknownShare: score.unknownShare))
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            return
        }
        var scenario = ""
        for row in rows {
            if row.scenario != scenario {
                scenario = row.scenario
                print("\n\(scenario) (seed \(seed), \(beacons) beacons, \(hours) h; true room changes \(String(format: "%.1f", row.truthRoomChangesPerHour))/h)")
                print("  algorithm                                                          right room  flaps/h  false exits/h  exit p50   exit p95  missed  unknown")
            }
            func seconds(_ value: Double?) -> String { value.map { String(format: "%.0f s", $0) } ?? "-" }
            print("  " + row.algorithm.padding(toLength: 66, withPad: " ", startingAt: 0)
                  + String(format: " %9.1f %%", row.correctRoomRate * 100) + String(format: " %8.1f", row.flapsPerHour)
                  + String(format: " %14.2f", row.falseExitsPerHour) + seconds(row.exitDelayMedian).leftPadded(10)
                  + seconds(row.exitDelayP95).leftPadded(11) + String(row.missedExits).leftPadded(8)
                  + String(format: " %7.1f %%", row.unknownShare * 100))
        }
    }

    static func score(_ algorithm: inout any PresenceAlgorithm, _ trace: SimulatedTrace) -> PresenceScore {
        func run<A: PresenceAlgorithm>(_ concrete: inout A) -> PresenceScore { Evaluation.score(&concrete, on: trace) }
        return run(&algorithm)
    }
}

/// Seeded draws for building scenarios.
struct SplitMixDraws {
    private var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(state: seed ^ 0x5EED_F100_0000_0000) }

    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(generator.next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
