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

    @Option(help: "beacond's room smoothing, seconds (the time constant of each receiver's RSSI smoothing).")
    var roomSmoothing = Double(RoomConfiguration.default.smoothing.components.seconds)

    @Option(help: "beacond's exit_chance: chance per hour that a present beacon is wrongly exited.")
    var exitChance = 1e-3

    @Option(help: "beacond's exit_timeout_min, seconds.")
    var exitTimeoutMin = 2.0

    @Option(help: "beacond's exit_timeout, seconds (the longest adaptive exit).")
    var exitTimeout = 180.0

    @Flag(help: "Score beacond's rows only (for sweeping its settings).")
    var beacondOnly = false

    @Option(help: "Where the recorded starksm64 runs are (Tests/Fixtures/monitoring of the repository).")
    var fixtures = "Tests/Fixtures/monitoring"

    @Flag(help: "Leave out the recorded runs (the starksm64 runs and the real flat).")
    var noRecorded = false

    @Option(help: "Where the real flat's survey is (Tests/Fixtures/flat-calib2021 of the repository).")
    var survey = "Tests/Fixtures/flat-calib2021"

    func validate() throws {
        guard hours > 0, hours <= 48, beacons > 0, beacons <= 200 else {
            throw ValidationError("--hours must be 0 to 48 and --beacons 1 to 200")
        }
    }

    var beacondName: String {
        String(
            format: "beacond (margin %.0f %%, dwell %g s%@, exits %g-%g s)", roomMargin * 100, roomDwell,
            roomSmoothing == Double(RoomConfiguration.default.smoothing.components.seconds) ? "" : String(format: ", smoothing %g s", roomSmoothing),
            exitTimeoutMin, exitTimeout)
    }

    func roomConfiguration() throws -> RoomConfiguration {
        try RoomConfiguration(
            margin: roomMargin, dwell: .milliseconds(Int64(roomDwell * 1000)), smoothing: .milliseconds(Int64(roomSmoothing * 1000)))
    }

    /// What the evaluation runs beacond with: adaptive exits between `exitTimeoutMin` and `exitTimeout`.
    func monitoring() throws -> MonitoringConfiguration {
        try PresenceSuite.beacondMonitoring(minimum: exitTimeoutMin, maximum: exitTimeout, chance: exitChance)
    }

    mutating func run() throws {
        let fixtures = noRecorded ? nil : self.fixtures
        var rows = try PresenceSuite.table(
            hours: hours, beacons: beacons, seed: seed, room: try roomConfiguration(),
            monitoring: try monitoring(), fixtures: fixtures,
            survey: noRecorded ? nil : try SurveyFlat.load(directory: survey), beacondOnly: beacondOnly)
        for index in rows.indices where rows[index].algorithm == PresenceSuite.beacondName {
            rows[index].algorithm = beacondName
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
                let what =
                    scenario.hasPrefix("starksm64") || scenario.hasPrefix("real flat")
                    ? "recorded"
                    : scenario.hasPrefix("simulated flat") ? "seed \(seed), the robot's path" : "seed \(seed), \(beacons) beacons, \(hours) h"
                print("\n\(scenario) (\(what); true room changes \(String(format: "%.1f", row.truthRoomChangesPerHour))/h)")
                print(
                    "  algorithm                                                          right room  flaps/h  false exits/h  exit p50   exit p95  "
                        + "missed  unknown  room exit p50  room exit p95  room missed"
                )
            }
            func seconds(_ value: Double?) -> String { value.map { String(format: "%.0f s", $0) } ?? "-" }
            print(
                "  " + row.algorithm.padding(toLength: 66, withPad: " ", startingAt: 0)
                    + String(format: " %9.1f %%", row.correctRoomRate * 100) + String(format: " %8.1f", row.flapsPerHour)
                    + String(format: " %14.2f", row.falseExitsPerHour) + seconds(row.exitDelayMedian).leftPadded(10)
                    + seconds(row.exitDelayP95).leftPadded(11) + String(row.missedExits).leftPadded(8)
                    + String(format: " %7.1f %%", row.unknownShare * 100) + seconds(row.roomExitDelayMedian).leftPadded(15)
                    + seconds(row.roomExitDelayP95).leftPadded(15)
                    + (row.scenario.hasPrefix("starksm64") || row.scenario.hasPrefix("real flat") || row.scenario.hasPrefix("simulated flat")
                    || row.roomExits.isEmpty
                    ? "-" : String(row.missedRoomExits)).leftPadded(13))
        }
    }

}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
