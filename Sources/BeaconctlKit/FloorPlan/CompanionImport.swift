public import BeaconKit
import Fleet
import Foundation
import Yams

/// `beaconctl floorplan import`: an ESPresense-companion `config.yaml` (its `floors` with `bounds` and `rooms` of
/// `points`, its `nodes` with `point` and `floors`) as beacond's floor plan, with what could not be carried said, each
/// at its line. Companion's other settings (MQTT, GPS, map, locators, devices, optimization) are beacond.toml's
/// business and are named once.
public struct CompanionImport: Sendable {
    /// The plan, every problem `FloorPlan.problems()` finds already dropped with a note.
    public var plan: FloorPlan
    /// What was not carried or was changed, and why: `config.yaml:LINE: …`.
    public var notes: [String]

    /// Reads `text` (the file `file`, named in notes). Throws when it is no YAML or has no floor to carry.
    public init(yaml text: String, file: String) throws(BeaconctlError) {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else { throw Self.failure("\(file) is empty") }
            root = node
        } catch let error as BeaconctlError {
            throw error
        } catch {
            throw Self.failure("\(file) is not YAML: \("\(error)".split(whereSeparator: \.isNewline).joined(separator: " "))")
        }
        guard case .mapping(let top) = root else { throw Self.failure("\(file): the top level is not a mapping of settings") }
        var notes: [String] = []
        func at(_ node: Node?) -> String { node?.mark.map { "\(file):\($0.line)" } ?? file }
        let ignored = top.keys.compactMap(\.string).filter { $0 != "floors" && $0 != "nodes" }
        if !ignored.isEmpty {
            notes.append(
                "\(file): \(ignored.joined(separator: ", ")) not carried: companion's own settings (beacond's are in "
                    + "beacond.toml; its devices are apps' regions)")
        }

        var floors: [FloorPlan.Floor] = []
        var rooms: [FloorPlan.Room] = []
        var lines: [String: String] = [:]
        for floorNode in root["floors"]?.array() ?? [] {
            guard let id = Self.id(floorNode["id"]?.string, name: floorNode["name"]?.string) else {
                notes.append("\(at(floorNode)): a floor with no usable id or name (1-64 of a-z, 0-9, '_', '-') is not carried, nor its rooms")
                continue
            }
            guard !floors.contains(where: { $0.id == id }) else {
                notes.append("\(at(floorNode)): a second floor \(id) is not carried, nor its rooms")
                continue
            }
            var floor = FloorPlan.Floor(id: id, name: floorNode["name"]?.string)
            if let bounds = floorNode["bounds"]?.array(), bounds.count == 2,
                let low = Self.numbers(bounds[0]), let high = Self.numbers(bounds[1]), low.count >= 2, high.count >= 2
            {
                floor.bounds = (
                    FloorPlan.Point(x: min(low[0], high[0]), y: min(low[1], high[1])),
                    FloorPlan.Point(x: max(low[0], high[0]), y: max(low[1], high[1]))
                )
                if low.count >= 3, high.count >= 3, low[2] != high[2] { floor.heights = min(low[2], high[2])..<max(low[2], high[2]) }
            } else if floorNode["bounds"] != nil {
                notes.append("\(at(floorNode["bounds"])): floor \(id)'s bounds are not [[x, y, z], [x, y, z]]: the box around its rooms is used")
            }
            floors.append(floor)
            for roomNode in floorNode["rooms"]?.array() ?? [] {
                let name = roomNode["name"]?.string
                guard let roomID = Self.id(roomNode["id"]?.string, name: name) else {
                    notes.append("\(at(roomNode)): a room with no usable id or name (1-64 of a-z, 0-9, '_', '-') is not carried")
                    continue
                }
                guard !rooms.contains(where: { $0.id == roomID }) else {
                    notes.append("\(at(roomNode)): a second room \(roomID) (on floor \(id)) is not carried: rooms are one id each")
                    continue
                }
                var points: [FloorPlan.Point] = []
                for pointNode in roomNode["points"]?.array() ?? [] {
                    guard let numbers = Self.numbers(pointNode), numbers.count >= 2 else { continue }
                    points.append(FloorPlan.Point(x: numbers[0], y: numbers[1]))
                }
                // Companion closes some polygons by repeating the first corner; floorplan.toml joins them itself.
                while points.count > 1, points.first == points.last { points.removeLast() }
                rooms.append(FloorPlan.Room(id: roomID, name: name, floor: id, points: points))
                lines["rooms." + roomID] = at(roomNode)
            }
        }
        guard !floors.isEmpty else { throw Self.failure("\(file) has no floors to carry (companion's `floors:` list)") }
        let floorsOnly = FloorPlan(floors: floors, rooms: [], receivers: [])
        // One floor with no heights spans them all; several need them.
        if floors.count > 1, floors.contains(where: { $0.heights == nil }) {
            throw Self.failure(
                "\(file): floors \(floors.filter { $0.heights == nil }.map(\.id).joined(separator: ", ")) have no heights "
                    + "(bounds' z): give each floor bounds: [[x, y, z], [x, y, z]] in companion, or write the plan by hand")
        }

        var receivers: [FloorPlan.Receiver] = []
        for nodeNode in root["nodes"]?.array() ?? [] {
            let name = nodeNode["name"]?.string
            guard let id = Self.id(nodeNode["id"]?.string, name: name) else {
                notes.append("\(at(nodeNode)): a node with no usable id or name (1-64 of a-z, 0-9, '_', '-') is not carried")
                continue
            }
            if nodeNode["stationary"]?.bool == false {
                notes.append("\(at(nodeNode)): node \(id) is not stationary (stationary: false): a receiver that moves has no place on a plan")
                continue
            }
            guard let point = nodeNode["point"].flatMap(Self.numbers), point.count >= 2 else {
                notes.append("\(at(nodeNode)): node \(id) has no point [x, y, z]: not carried")
                continue
            }
            guard !receivers.contains(where: { $0.id == id }) else {
                notes.append("\(at(nodeNode)): a second node \(id) is not carried")
                continue
            }
            let z = point.count >= 3 ? point[2] : nil
            let listed = (nodeNode["floors"]?.array() ?? []).compactMap(\.string).compactMap { Self.id($0, name: nil) }
            // Its floor: the listed floor whose heights hold it, else the first listed, else by height alone.
            let floor =
                listed.first { id in floors.first { $0.id == id }?.heights.map { range in z.map(range.contains) ?? false } ?? false }
                ?? listed.first { id in floors.contains { $0.id == id } } ?? z.flatMap { floorsOnly.floor(atHeight: $0)?.id }
                ?? (floors.count == 1 ? floors[0].id : nil)
            guard let floor else {
                notes.append("\(at(nodeNode)): node \(id) is on none of the plan's floors (floors: \(listed.joined(separator: ", "))): not carried")
                continue
            }
            if listed.count > 1 {
                notes.append("\(at(nodeNode)): node \(id) is listed on \(listed.joined(separator: " and ")): placed on \(floor), its height's")
            }
            let height = z ?? ((floors.first { $0.id == floor }?.heights?.lowerBound ?? 0) + 2)
            receivers.append(FloorPlan.Receiver(id: id, floor: floor, x: point[0], y: point[1], z: height))
            lines["receivers." + id] = at(nodeNode)
        }

        // What beacond would refuse is dropped, the room or receiver named, until nothing is left to refuse.
        var result = FloorPlan(floors: floors, rooms: rooms, receivers: receivers)
        while let problem = result.problems().first {
            let kind = problem.path.first ?? ""
            let id = problem.path.count > 1 ? problem.path[1] : ""
            switch kind {
            case "rooms":
                result.rooms.removeAll { $0.id == id }
                notes.append("\(lines["rooms." + id] ?? file): room \(id) not carried: \(problem.message)")
            case "receivers":
                result.receivers.removeAll { $0.id == id }
                notes.append("\(lines["receivers." + id] ?? file): node \(id) not carried: \(problem.message)")
            default:
                throw Self.failure("\(file): \(problem.message); fix: \(problem.fix)")
            }
        }
        plan = result
        self.notes = notes
    }

    /// An id as floorplan.toml takes it: one written as such kept as it is (a node's id is its topics' name), else
    /// ESPresense's slug of it or of the name ("Living Room" is living_room); nil when neither gives 1-64 characters.
    static func id(_ written: String?, name: String?) -> String? {
        if let written, RegionSpec.isRoom(written) { return written }
        guard let slug = (written ?? name).map(ESPresense.roomSlug), RegionSpec.isRoom(slug) else { return nil }
        return slug
    }

    private static func numbers(_ node: Node) -> [Double]? {
        let values = node.array().map { $0.string.flatMap(Double.init) }
        guard !values.isEmpty, values.allSatisfy({ $0?.isFinite == true }) else { return nil }
        return values.compactMap { $0 }
    }

    private static func failure(_ message: String) -> BeaconctlError {
        BeaconctlError(exitStatus: ExitStatus.failure, message: message)
    }
}

extension FloorPlan {
    /// The plan as `floorplan.toml` (floorplan.toml(5)), headed by `header` comment lines.
    public func toml(header: [String] = []) -> String {
        func number(_ value: Double) -> String {
            let rounded = (value * 1000).rounded() / 1000
            return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int(rounded)) : String(rounded)
        }
        // TOML forbids control characters in strings and comments: a name or path drawn by someone else is escaped.
        func quoted(_ text: String) -> String {
            "\""
                + text.unicodeScalars.map { scalar in
                    if scalar == "\"" || scalar == "\\" { return "\\" + String(scalar) }
                    if scalar.value < 0x20 || scalar.value == 0x7F { return String(format: "\\u%04X", scalar.value) }
                    return String(scalar)
                }.joined() + "\""
        }
        func comment(_ text: String) -> String {
            "# " + String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
        }
        var lines = header.map(comment)
        for floor in floors {
            lines += ["", "[floors.\(floor.id)]"]
            if floor.name != floor.id { lines.append("name = \(quoted(floor.name))") }
            if let heights = floor.heights { lines.append("heights = [\(number(heights.lowerBound)), \(number(heights.upperBound))]") }
            if floor.tagHeight != 1.0 { lines.append("tag_height = \(number(floor.tagHeight))") }
            if let bounds = floor.bounds {
                let (low, high) = (
                    "[\(number(bounds.minimum.x)), \(number(bounds.minimum.y))]", "[\(number(bounds.maximum.x)), \(number(bounds.maximum.y))]"
                )
                lines.append("bounds = [\(low), \(high)]")
            }
        }
        for room in rooms {
            lines += ["", "[rooms.\(room.id)]"]
            if floors.count > 1 { lines.append("floor = \(quoted(room.floor))") }
            if room.name != room.id { lines.append("name = \(quoted(room.name))") }
            lines.append("points = [" + room.points.map { "[\(number($0.x)), \(number($0.y))]" }.joined(separator: ", ") + "]")
        }
        for receiver in receivers {
            lines += ["", "[receivers.\(receiver.id)]"]
            if floors.count > 1 { lines.append("floor = \(quoted(receiver.floor))") }
            lines += ["x = \(number(receiver.x))", "y = \(number(receiver.y))", "z = \(number(receiver.z))"]
            if let calibration = receiver.calibration {
                lines += ["rssi_offset = \(number(calibration.rssiOffset))", "path_loss_exponent = \(number(calibration.pathLossExponent))"]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
