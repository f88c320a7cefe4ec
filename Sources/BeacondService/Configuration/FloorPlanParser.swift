import BeaconKit
import BeacondCore
import Fleet

/// Reads `floorplan.toml` (floorplan.toml(5), in config/README.md): `[floors.<id>]` with `name`, `heights`,
/// `tag_height` and `bounds`; `[rooms.<id>]` with `floor`, `name` and `points`; `[receivers.<id>]` with `floor`, `x`,
/// `y`, `z`, `rssi_offset` and `path_loss_exponent`. Every problem names its line and the fix; all are said at once.
enum FloorPlanParser {
    /// The file's name in the configuration directory when `[rooms] floorplan` names none.
    static let fileName = "floorplan.toml"

    /// Where a receiver is mounted above its floor when the plan gives no `z`, metres.
    static let defaultReceiverHeight = 2.0

    static func parse(_ document: TOMLDocument) throws(ConfigurationError) -> (plan: FloorPlan, warnings: [ConfigurationDiagnostic]) {
        var root = document.rootReader
        var warnings: [ConfigurationDiagnostic] = []
        var floorsTable = try root.tableOrEmpty("floors")
        var roomsTable = try root.tableOrEmpty("rooms")
        var receiversTable = try root.tableOrEmpty("receivers")
        warnings += root.unknownKeyWarnings(knownName: "known sections")
        /// Keys in the order the file writes them, so problems come in the file's order.
        func ordered(_ reader: TOMLTableReader) -> [String] {
            reader.table.keys.sorted { (reader.line(of: $0) ?? .max, $0) < (reader.line(of: $1) ?? .max, $1) }
        }
        func checkID(_ id: String, _ reader: TOMLTableReader, _ section: String, example: String) throws(ConfigurationError) {
            guard RegionSpec.isRoom(id) else {
                throw reader.error(
                    id, "[\(section).\(id)]: \"\(id)\" is not an id: 1-64 of a-z, 0-9, '_' and '-'",
                    fix: "write e.g. [\(section).\(example)]" + (section == "receivers" ? " with the receiver's id as its topics name it" : ""))
            }
        }

        var floors: [FloorPlan.Floor] = []
        for id in ordered(floorsTable) {
            try checkID(id, floorsTable, "floors", example: "ground")
            guard var table = try floorsTable.table(id) else { continue }
            let name = try table.string("name", example: "Ground floor")
            var heights: Range<Double>?
            if let pair = try table.numbers("heights", count: 2, example: "[0, 2.8]") {
                guard pair[0] < pair[1] else {
                    throw table.error(
                        "heights", "[floors.\(id)] heights = [\(pair[0]), \(pair[1])] span nothing",
                        fix: "write the floor's own height first, e.g. heights = [0, 2.8]")
                }
                heights = pair[0]..<pair[1]
            }
            let tagHeight = try table.number("tag_height", example: "1.0") ?? 1.0
            guard (0...10).contains(tagHeight) else {
                throw table.error(
                    "tag_height", "[floors.\(id)] tag_height = \(tagHeight) is out of range",
                    fix: "write 0 to 10 metres above the floor, e.g. tag_height = 1.0")
            }
            var bounds: (minimum: FloorPlan.Point, maximum: FloorPlan.Point)?
            if let corners = try table.points("bounds", width: 2, example: "[[0, 0], [12, 9]]") {
                guard corners.count == 2 else {
                    throw table.error(
                        "bounds", "[floors.\(id)] bounds has \(corners.count) corners, but takes two",
                        fix: "write the lowest and highest corners, e.g. bounds = [[0, 0], [12, 9]]")
                }
                bounds = (FloorPlan.Point(x: corners[0][0], y: corners[0][1]), FloorPlan.Point(x: corners[1][0], y: corners[1][1]))
            }
            floors.append(FloorPlan.Floor(id: id, name: name, heights: heights, tagHeight: tagHeight, bounds: bounds))
            warnings += table.unknownKeyWarnings()
        }
        guard !floors.isEmpty else {
            throw ConfigurationError(
                file: document.file, line: nil, message: "the floor plan has no floor",
                fix: "add at least [floors.<id>], e.g. [floors.ground], with rooms on it ([rooms.kitchen] floor = \"ground\", points = ...)")
        }
        let only = floors.count == 1 ? floors[0].id : nil
        func floorKey(_ table: inout TOMLTableReader, _ section: String, _ id: String) throws(ConfigurationError) -> String? {
            let floor = try table.string("floor", example: floors[0].id)
            if floor == nil, only == nil, section == "rooms" {
                throw table.error(
                    "points", "[rooms.\(id)] does not say its floor, and the plan has \(floors.count)",
                    fix: "write floor = \"<id>\" with one of: \(floors.map(\.id).joined(separator: ", "))")
            }
            return floor ?? only
        }

        var rooms: [FloorPlan.Room] = []
        for id in ordered(roomsTable) {
            try checkID(id, roomsTable, "rooms", example: "kitchen")
            guard var table = try roomsTable.table(id) else { continue }
            let floor = try floorKey(&table, "rooms", id) ?? ""
            let name = try table.string("name", example: "Kitchen")
            guard let points = try table.points("points", width: 2, example: "[[0, 0], [4, 0], [4, 3], [0, 3]]") else {
                throw roomsTable.error(
                    id, "[rooms.\(id)] has no points", fix: "list its corners in order around it, e.g. points = [[0, 0], [4, 0], [4, 3], [0, 3]]")
            }
            rooms.append(FloorPlan.Room(id: id, name: name, floor: floor, points: points.map { FloorPlan.Point(x: $0[0], y: $0[1]) }))
            warnings += table.unknownKeyWarnings()
        }

        var receivers: [FloorPlan.Receiver] = []
        for id in ordered(receiversTable) {
            try checkID(id, receiversTable, "receivers", example: "kitchen")
            guard var table = try receiversTable.table(id) else { continue }
            let written = try table.string("floor", example: floors[0].id)
            guard let x = try table.number("x", example: "1.5") else {
                throw receiversTable.error(
                    id, "[receivers.\(id)] has no x", fix: "write where it stands, metres on the plan: x = 1.5, y = 2.0, z = 2.2")
            }
            guard let y = try table.number("y", example: "2.0") else {
                throw receiversTable.error(
                    id, "[receivers.\(id)] has no y", fix: "write where it stands, metres on the plan: x = 1.5, y = 2.0, z = 2.2")
            }
            let z = try table.number("z", example: "2.2")
            let floor: String
            if let written {
                floor = written
            } else if let z {
                floor = FloorPlan(floors: floors, rooms: [], receivers: []).floor(atHeight: z)?.id ?? ""
            } else {
                floor = only ?? ""
            }
            let height = z ?? ((floors.first { $0.id == floor }?.heights?.lowerBound ?? 0) + defaultReceiverHeight)
            var calibration: ReceiverCalibration?
            let offset = try table.number("rssi_offset", example: "6.0")
            let exponent = try table.number("path_loss_exponent", example: "2.7")
            if offset != nil || exponent != nil {
                do {
                    calibration = try ReceiverCalibration(
                        rssiOffset: offset ?? 0, pathLossExponent: exponent ?? ReceiverCalibration.uncalibrated.pathLossExponent)
                } catch {
                    let key = ReceiverCalibration.offsetRange.contains(offset ?? 0) ? "path_loss_exponent" : "rssi_offset"
                    throw table.error(
                        key, "[receivers.\(id)] \(error)",
                        fix: "run beaconctl calibrate again, or write e.g. rssi_offset = 6.0 and path_loss_exponent = 2.7")
                }
            }
            receivers.append(FloorPlan.Receiver(id: id, floor: floor, x: x, y: y, z: height, calibration: calibration))
            warnings += table.unknownKeyWarnings()
        }

        let plan = FloorPlan(floors: floors, rooms: rooms, receivers: receivers)
        let problems = plan.problems().map { problem in
            ConfigurationError(file: document.file, line: line(of: problem.path, in: document), message: problem.message, fix: problem.fix)
        }
        if var first = problems.first {
            first.others = Array(problems.dropFirst())
            throw first
        }
        return (plan, warnings)
    }

    /// The line of `path`, or of the nearest table around it that has one.
    static func line(of path: [String], in document: TOMLDocument) -> Int? {
        var path = path
        while !path.isEmpty {
            if let line = document.keyLines.line(of: path) { return line }
            path.removeLast()
        }
        return nil
    }
}
