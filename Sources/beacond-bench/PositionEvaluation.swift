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

    @Option(help: "Rooms from positions: seconds a new room must hold the position (default: beacond's).")
    var planDwell: Double?

    @Option(help: "Rooms from positions: metres inside a room that move the beacon at once (default: beacond's).")
    var planDepth: Double?

    @Option(help: "Rooms from positions: metres of accuracy beyond which the room is unknown (default: beacond's).")
    var planAccuracy: Double?

    @Flag(help: "Sweep the rooms-from-positions settings: each fold's choice judged on the other fold.")
    var sweep = false

    @Option(
        help: ArgumentHelp(
            "Write floorplan.toml (calibrated at 2 spots a room of the odd minutes) and drive.csv (the even minute with most "
                + "room changes) for make run and the replay test, then stop.", valueName: "directory"))
    var writeReplay: String?

    func run() throws {
        let flat = try SurveyFlat.load(directory: survey)
        if let writeReplay {
            try Self.writeReplay(flat, to: writeReplay)
            return
        }
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
        // Calibrated by the receivers hearing each other (`beaconctl calibrate --receivers`): the survey has no such
        // readings, so 60 s of them are drawn from the radio fitted on the other fold, five draws pooled; and no
        // calibration at all, for scale.
        var meshed: [[PositionScore]] = [[], []]
        var uncalibrated: [PositionScore] = []
        let meshNames = ["beacond's locator, calibrated by receivers (simulated)", "  ... an exponent each, not one shared"]
        for (fold, judged, other) in [("even", even, odd), ("odd", odd, even)] {
            let radio = flat.radio(fittedOn: other)
            for (variant, together) in [true, false].enumerated() {
                var pooled: PositionScore?
                for seed in UInt64(1)...5 {
                    let mesh = flat.meshCalibrations(radio: radio, together: together, seed: seed)
                    let score = flat.score(flat.locate(judged, calibrations: mesh.calibrations).track, method: meshNames[variant])
                    pooled = pooled.map { $0 + score } ?? score
                }
                if let pooled {
                    meshed[variant].append(pooled)
                    line(fold, pooled)
                }
            }
            let plain = flat.score(
                flat.locate(judged, calibrations: Array(repeating: .uncalibrated, count: flat.receivers.count)).track,
                method: "beacond's locator, uncalibrated")
            uncalibrated.append(plain)
            line(fold, plain)
        }
        for variant in meshed where variant.count == 2 { line("drive", variant[0] + variant[1]) }
        line("drive", uncalibrated[0] + uncalibrated[1])
        // Rooms from positions, as the daemon places them with a floor plan: calibrated at spots of the other fold.
        var rooms = PlanRoomConfiguration.default
        if let planDwell { rooms.dwell = .milliseconds(Int64(planDwell * 1000)) }
        if let planDepth { rooms.depth = planDepth }
        if let planAccuracy { rooms.maximumAccuracy = planAccuracy }
        let name = String(
            format: "rooms from positions (dwell %.0f s, depth %.1f m, ±%.0f m)", Double(rooms.dwell.wholeMicroseconds) / 1e6, rooms.depth,
            rooms.maximumAccuracy)
        var placed: [PositionScore] = []
        for (fold, judged, other) in [("even", even, odd), ("odd", odd, even)] {
            let result = flat.place(judged, fittedOn: flat.calibrationSpots(among: other), rooms: rooms)
            let score = flat.score(result.track, method: name, rooms: result.rooms)
            placed.append(score)
            line(fold, score)
        }
        line("drive", placed[0] + placed[1])
        if sweep { sweepPlanRooms(flat) }
        // The fingerprint mode tried for a survey (not in the daemon yet): kNN over RSSIs smoothed as the locator's.
        // The baseline's k and the locator's smoothing, chosen before it was run: nothing here is tuned on the folds.
        do {
            let name = "fingerprint mode: kNN-5 on 4 s smoothed RSSIs"
            let onEven = flat.score(flat.locateBySmoothedFingerprint(even, fittedOn: odd), method: name)
            let onOdd = flat.score(flat.locateBySmoothedFingerprint(odd, fittedOn: even), method: name)
            line("even", onEven)
            line("odd", onOdd)
            line("drive", onEven + onOdd)
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

extension PositionEvaluation {
    /// Every setting of rooms from positions on each fold, and the one each fold prefers (most right room with at
    /// most 1.2 changes per true change) judged on the other.
    func sweepPlanRooms(_ flat: SurveyFlat) {
        let (even, odd) = flat.folds
        var settings: [PlanRoomConfiguration] = []
        for dwell in [0.0, 1, 2, 3, 4, 6] {
            for depth in [0.5, 1.0, 1.5, 100] {
                for accuracy in [3.0, 4, 6, 100] {
                    settings.append(
                        PlanRoomConfiguration(
                            dwell: .milliseconds(Int64(dwell * 1000)), depth: depth, maximumAccuracy: accuracy, interval: .seconds(1)))
                }
            }
        }
        print("  sweep: dwell s, depth m, accuracy limit m: right room and changes per true change on each fold")
        var results: [[PositionScore]] = []
        let spotsFor = [flat.calibrationSpots(among: odd), flat.calibrationSpots(among: even)]
        for setting in settings {
            var row: [PositionScore] = []
            for (fold, judged) in [even, odd].enumerated() {
                let result = flat.place(judged, fittedOn: spotsFor[fold], rooms: setting)
                row.append(flat.score(result.track, method: "", rooms: result.rooms))
            }
            results.append(row)
            print(
                String(
                    format: "    %4.1f %5.1f %5.0f   even %5.1f %% %5.2f   odd %5.1f %% %5.2f", Double(setting.dwell.wholeMicroseconds) / 1e6,
                    setting.depth, setting.maximumAccuracy, row[0].rightRoomRate * 100, row[0].changesPerTrueChange,
                    row[1].rightRoomRate * 100, row[1].changesPerTrueChange))
        }
        for (fold, other) in [(0, 1), (1, 0)] {
            let eligible = results.indices.filter { results[$0][fold].changesPerTrueChange <= 1.2 }
            guard let best = eligible.max(by: { results[$0][fold].rightRoomRate < results[$1][fold].rightRoomRate }) else { continue }
            let setting = settings[best]
            print(
                String(
                    format:
                        "  chosen on %@: dwell %.1f s, depth %.1f m, limit %.0f m -> judged on %@: %.1f %% right room, %.2f changes per true change",
                    fold == 0 ? "even" : "odd", Double(setting.dwell.wholeMicroseconds) / 1e6, setting.depth, setting.maximumAccuracy,
                    other == 0 ? "even" : "odd", results[best][other].rightRoomRate * 100, results[best][other].changesPerTrueChange))
        }
    }
}

extension PositionEvaluation {
    static let attribution = """
        # Derived from M. Kolakowski, "BLE RSS dataset for fingerprinting radio map calibration",
        # github.com/marckolak/ble-rss-fingerprints-calib2021, DOI 10.5281/zenodo.5457591, licensed CC BY 4.0
        # (https://creativecommons.org/licenses/by/4.0/); see Tests/Fixtures/flat-calib2021/README.md.
        # Written by `beacond-bench position --write-replay`: do not edit by hand.

        """

    /// The flat's floor plan as a user would write it (receivers r1…r6, calibrated at two 10 s spots a room among the
    /// odd minutes), and the even minute of the drive with the most room changes (never fitted on), for replay.
    static func writeReplay(_ flat: SurveyFlat, to directory: String) throws {
        let (even, odd) = flat.folds
        var plan = flat.floorPlan(calibrations: flat.locatorCalibrations(fittedOn: flat.calibrationSpots(among: odd)))
        // rooms.csv's boxes are approximate: where one reaches a few centimetres into the room below it (the living room
        // into the hall), it starts at that room's wall instead, as floorplan.toml requires.
        for index in plan.rooms.indices {
            let box = flat.rooms[index]
            for other in flat.rooms where other != box && other.x0 < box.x1 && box.x0 < other.x1 && other.y1 > box.y0 && other.y1 - box.y0 < 0.1 {
                plan.rooms[index].points = plan.rooms[index].points.map { $0.y == box.y0 ? FloorPlan.Point(x: $0.x, y: other.y1) : $0 }
            }
        }
        func number(_ value: Double) -> String { String(format: "%.2f", value) }
        var toml = attribution
        toml += "[floors.flat]\nname = \"The surveyed flat\"\ntag_height = 0\n"
        for room in plan.rooms {
            toml += "\n[rooms.\(room.id)]\npoints = [" + room.points.map { "[\(number($0.x)), \(number($0.y))]" }.joined(separator: ", ") + "]\n"
        }
        for receiver in plan.receivers {
            toml += "\n[receivers.\(receiver.id)]\nx = \(number(receiver.x))\ny = \(number(receiver.y))\nz = \(number(receiver.z))\n"
            if let calibration = receiver.calibration {
                toml += "rssi_offset = \(number(calibration.rssiOffset))\npath_loss_exponent = \(number(calibration.pathLossExponent))\n"
            }
        }
        // The even minute whose true room changes most often.
        var minutes: [Int: [Int]] = [:]
        for index in even { minutes[Int(flat.rows[index].time / SurveyFlat.foldLength), default: []].append(index) }
        func changes(_ rows: [Int]) -> Int {
            let rooms = rows.compactMap { flat.room(x: flat.rows[$0].x, y: flat.rows[$0].y) }
            return zip(rooms, rooms.dropFirst()).count { $0 != $1 }
        }
        guard let minute = minutes.keys.sorted().max(by: { changes(minutes[$0]!) < changes(minutes[$1]!) }) else { return }
        let rows = minutes[minute]!
        let start = flat.rows[rows[0]].time
        var csv = attribution.split(separator: "\n").map { "\($0)\n" }.joined()
        csv +=
            "# Minute \(minute) of the survey drive (rows \(rows[0])-\(rows.last!) of survey.csv): t seconds from its start, "
            + "the robot's x, y and room, and each receiver's RSSI (empty: a miss).\n"
        csv += "t,x,y,room,r1,r2,r3,r4,r5,r6\n"
        for index in rows {
            let row = flat.rows[index]
            let room = flat.room(x: row.x, y: row.y).map { flat.rooms[$0].name } ?? ""
            csv +=
                [number(row.time - start), number(row.x), number(row.y), room].joined(separator: ",") + ","
                + row.rssi.map { $0.map { String(Int($0.rounded())) } ?? "" }.joined(separator: ",") + "\n"
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try toml.write(toFile: directory + "/floorplan.toml", atomically: true, encoding: .utf8)
        try csv.write(toFile: directory + "/drive.csv", atomically: true, encoding: .utf8)
        print("wrote \(directory)/floorplan.toml and \(directory)/drive.csv (minute \(minute), \(rows.count) rows, \(changes(rows)) room changes)")
    }
}
