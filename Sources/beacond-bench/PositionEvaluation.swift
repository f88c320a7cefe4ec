import ArgumentParser
import BeaconKit
import Foundation
import PresenceSimulation

/// `beacond-bench position`: positions on the real flat (Tests/Fixtures/flat-calib2021, CC BY 4.0) by the baselines a
/// locator must beat, each fold of the drive's minutes judged by a model fitted on the other (docs/position.md).
struct PositionEvaluation: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "position",
        abstract: "Score position baselines on the real flat's survey: error, right room, room changes.",
        discussion: """
            Each fold of the survey drive's minutes is judged by a model fitted on the other fold, never on its own \
            rows; "drive" pools both. Run from the repository, or give --survey.
            """)

    @Option(help: "Where the real flat's survey is.")
    var survey = "Tests/Fixtures/flat-calib2021"

    func run() throws {
        let flat = try SurveyFlat.load(directory: survey)
        let (even, odd) = flat.folds
        print("positions on the real flat, each fold judged by a model fitted on the other (\(flat.rows.count) rows)")
        print(
            "  minutes method                                                  median     p95  right room  room changes per true change")
        func line(_ fold: String, _ score: PositionScore) {
            print(
                "  " + fold.padding(toLength: 8, withPad: " ", startingAt: 0) + score.method.padding(toLength: 54, withPad: " ", startingAt: 0)
                    + String(
                        format: "%6.2f m %6.2f m %9.1f %% %14.2f", score.median, score.p95, score.rightRoomRate * 100, score.changesPerTrueChange))
        }
        // Today's room locator, in the same run: rooms only, each fold calibrated on the other.
        var roomRows: [(fold: String, name: String, right: Double, ratio: Double, weight: Double)] = []
        for (fold, name, fitted) in [(0, "even", odd), (1, "odd", even)] {
            var rules = PresenceSuite.algorithms(
                rooms: flat.receiverRooms, room: .default, monitoring: try PresenceSuite.beacondMonitoring(),
                calibrations: flat.calibrations(fittedOn: fitted), beacondOnly: true, roomRegions: false)
            let trace = flat.trace { flat.fold(of: $0) == fold }
            let weight = Double((fold == 0 ? even : odd).count { flat.room(x: flat.rows[$0].x, y: flat.rows[$0].y) != nil })
            for index in rules.indices {
                let score = PresenceSuite.score(&rules[index], trace)
                let rule = rules[index].name == PresenceSuite.calibratedName ? "today's rooms (beacond), calibrated" : "today's rooms (beacond)"
                roomRows.append((name, rule, score.correctRoomRate, score.flapsPerHour / score.truthRoomChangesPerHour, weight))
            }
        }
        for (fold, name, right, ratio, _) in roomRows {
            print(
                "  " + fold.padding(toLength: 8, withPad: " ", startingAt: 0) + name.padding(toLength: 54, withPad: " ", startingAt: 0)
                    + String(format: "       -        - %9.1f %% %14.2f", right * 100, ratio))
        }
        for name in Set(roomRows.map(\.name)).sorted() {
            let rows = roomRows.filter { $0.name == name }
            let total = rows.reduce(0) { $0 + $1.weight }
            let right = rows.reduce(0) { $0 + $1.right * $1.weight } / total
            let ratio = rows.reduce(0) { $0 + $1.ratio * $1.weight } / total
            print(
                "  " + "drive".padding(toLength: 8, withPad: " ", startingAt: 0) + name.padding(toLength: 54, withPad: " ", startingAt: 0)
                    + String(format: "       -        - %9.1f %% %14.2f", right * 100, ratio))
        }
        // beacond's locator, calibrated as a user would (two spots of 10 s in each room, `beaconctl calibrate --at`)
        // among the other fold's rows, and on the whole other fold (a survey).
        for (name, spots) in [("beacond's locator, calibrated at 2 spots a room", true), ("beacond's locator, calibrated on a survey", false)] {
            var located: [PositionScore] = []
            var held: [(held: Int, count: Int)] = []
            for (fold, judged, other) in [("even", even, odd), ("odd", odd, even)] {
                let fitted = spots ? flat.calibrationSpots(among: other) : other
                let (track, accuracies) = flat.locate(judged, fittedOn: fitted)
                let score = flat.score(track, method: name)
                let within = zip(score.errors, accuracies).count { $0 <= $1 }
                located.append(score)
                held.append((within, accuracies.count))
                line(fold, score)
                print(
                    String(
                        format: "          the true position within the stated accuracy: %.1f %% of rows (median accuracy %.2f m)",
                        Double(within) / Double(max(accuracies.count, 1)) * 100, PresenceScore.quantile(0.5, of: accuracies) ?? .nan))
            }
            line("drive", located[0] + located[1])
            print(
                String(
                    format: "          the true position within the stated accuracy: %.1f %% of rows",
                    Double(held[0].held + held[1].held) / Double(max(held[0].count + held[1].count, 1)) * 100))
        }
        for method in PositionBaseline.allCases {
            let onEven = flat.score(flat.locate(even, by: method, fittedOn: odd), method: method.rawValue)
            let onOdd = flat.score(flat.locate(odd, by: method, fittedOn: even), method: method.rawValue)
            line("even", onEven)
            line("odd", onOdd)
            line("drive", onEven + onOdd)
        }
    }
}
