/// The administrator's floor plan (`floorplan.toml`, issue 41): floors, rooms drawn as polygons on them, and the
/// receivers at their places. A receiver's room is the polygon it stands in, so a room may have any number of
/// receivers and a receiver need not be named after its room. Pure: parsing lives with the other configuration files.
public struct FloorPlan: Hashable, Sendable {
    /// A point on a floor, metres.
    public struct Point: Hashable, Sendable, CustomStringConvertible {
        public var x: Double
        public var y: Double

        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }

        public var description: String { "(\(Self.metres(x)), \(Self.metres(y)))" }

        /// Centimetres at most; any number, however large or not finite, is written without trapping.
        static func metres(_ value: Double) -> String {
            let rounded = (value * 100).rounded() / 100
            guard rounded.isFinite, abs(rounded) < 1e12 else { return "\(value)" }
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
    }

    public struct Floor: Hashable, Sendable {
        public var id: String
        public var name: String
        /// Heights the floor spans, metres: from its floor to the next floor's (a receiver at a height belongs to the
        /// floor whose span holds it). Nil for the only floor of a plan, which spans every height.
        public var heights: Range<Double>?
        /// Where tags are carried above the floor's own height, metres.
        public var tagHeight: Double
        /// The rectangle the locator searches; nil: the box around the floor's rooms and receivers.
        public var bounds: (minimum: Point, maximum: Point)? {
            get { storedBounds.map { ($0[0], $0[1]) } }
            set { storedBounds = newValue.map { [$0.minimum, $0.maximum] } }
        }
        private var storedBounds: [Point]?

        public init(
            id: String, name: String? = nil, heights: Range<Double>? = nil, tagHeight: Double = 1.0,
            bounds: (minimum: Point, maximum: Point)? = nil
        ) {
            self.id = id
            self.name = name ?? id
            self.heights = heights
            self.tagHeight = tagHeight
            self.bounds = bounds
        }
    }

    public struct Room: Hashable, Sendable {
        /// The room's slug, as `@room` regions, ranging's `Room` and MQTT name it.
        public var id: String
        public var name: String
        public var floor: String
        /// The polygon's corners in order (either direction; concave allowed), not closed: the last joins the first.
        public var points: [Point]

        public init(id: String, name: String? = nil, floor: String, points: [Point]) {
            self.id = id
            self.name = name ?? id
            self.floor = floor
            self.points = points
        }

        /// Whether `point` is inside the polygon (even-odd rule; a point on an edge belongs to one side only, so two
        /// rooms sharing a wall never both hold it).
        public func contains(_ point: Point) -> Bool {
            var inside = false
            var previous = points[points.count - 1]
            for corner in points {
                if (corner.y > point.y) != (previous.y > point.y) {
                    let crossing = (previous.x - corner.x) * (point.y - corner.y) / (previous.y - corner.y) + corner.x
                    if point.x < crossing { inside.toggle() }
                }
                previous = corner
            }
            return inside
        }

        /// Metres from `point` to the nearest wall of the polygon.
        public func distanceToWall(_ point: Point) -> Double {
            var nearest = Double.infinity
            var previous = points[points.count - 1]
            for corner in points {
                nearest = min(nearest, Geometry.distance(point, toSegment: previous, corner))
                previous = corner
            }
            return nearest
        }

        /// Square metres.
        public var area: Double { abs(Geometry.signedArea(points)) }
    }

    /// A receiver by its id on the broker (an ESPresense node's room slug; this node's own `[mqtt] room`).
    public struct Receiver: Hashable, Sendable {
        public var id: String
        public var floor: String
        public var x: Double
        public var y: Double
        public var z: Double
        /// Its calibration written in the plan; nil: `calibration.toml`'s, or none.
        public var calibration: ReceiverCalibration?

        public init(id: String, floor: String, x: Double, y: Double, z: Double, calibration: ReceiverCalibration? = nil) {
            self.id = id
            self.floor = floor
            self.x = x
            self.y = y
            self.z = z
            self.calibration = calibration
        }

        public var point: Point { Point(x: x, y: y) }
    }

    public var floors: [Floor]
    public var rooms: [Room]
    public var receivers: [Receiver]

    public init(floors: [Floor], rooms: [Room], receivers: [Receiver]) {
        self.floors = floors
        self.rooms = rooms
        self.receivers = receivers
    }

    /// The room holding `point` on `floor`; nil in a space no room covers (a hall not drawn) or on no floor.
    public func room(at point: Point, floor: String) -> Room? {
        rooms.first { $0.floor == floor && $0.contains(point) }
    }

    public func receiver(_ id: String) -> Receiver? { receivers.first { $0.id == id } }

    /// The room a receiver stands in.
    public func room(ofReceiver id: String) -> Room? {
        guard let receiver = receiver(id) else { return nil }
        return room(at: receiver.point, floor: receiver.floor)
    }

    /// The floor whose heights hold `z`: the only floor of a one-floor plan.
    public func floor(atHeight z: Double) -> Floor? {
        if floors.count == 1, floors[0].heights == nil { return floors[0] }
        return floors.first { $0.heights?.contains(z) ?? false }
    }

    /// The rectangle the locator searches on `floor`: its bounds, or the box around its rooms and receivers.
    public func extent(of floor: Floor) -> (minimum: Point, maximum: Point) {
        if let bounds = floor.bounds { return bounds }
        let points = rooms.filter { $0.floor == floor.id }.flatMap(\.points) + receivers.filter { $0.floor == floor.id }.map(\.point)
        guard let first = points.first else { return (Point(x: 0, y: 0), Point(x: 0, y: 0)) }
        var (minimum, maximum) = (first, first)
        for point in points {
            minimum = Point(x: min(minimum.x, point.x), y: min(minimum.y, point.y))
            maximum = Point(x: max(maximum.x, point.x), y: max(maximum.y, point.y))
        }
        return (minimum, maximum)
    }

    /// The floors as the locator searches them.
    public var locatorFloors: [LocatorFloor] {
        floors.map { floor in
            let extent = extent(of: floor)
            return LocatorFloor(
                id: floor.id, minimumX: extent.minimum.x, minimumY: extent.minimum.y, maximumX: extent.maximum.x,
                maximumY: extent.maximum.y, tagHeight: (floor.heights?.lowerBound ?? 0) + floor.tagHeight)
        }
    }
}

/// What is wrong with a floor plan: where (a key path as `floorplan.toml` writes it, for the line), what, and the fix.
public struct FloorPlanProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// Tables and key from the top of the file: `["rooms", "kitchen", "points"]`.
    public var path: [String]
    public var message: String
    public var fix: String

    public init(path: [String], message: String, fix: String) {
        self.path = path
        self.message = message
        self.fix = fix
    }

    public var description: String { "\(message). Fix: \(fix)" }
}

extension FloorPlan {
    /// Metres from the origin no coordinate of a building's plan reaches.
    public static let largestCoordinate = 10_000.0
    /// Metres a side of the largest floor the locator searches (at 0.25 m, 640,000 spots).
    public static let largestFloor = 200.0

    /// Every problem that makes the plan unusable, in the order of the file: unknown floors, rooms that are not
    /// polygons (fewer than three corners, a corner repeated, edges crossing, no area), rooms that overlap on a
    /// floor, receivers on no floor or outside their floor's bounds, floors whose heights overlap.
    public func problems() -> [FloorPlanProblem] {
        var problems: [FloorPlanProblem] = []
        // Numbers no plan of a building has (infinite, or kilometres away) would stall the locator's grid.
        let limit = Self.largestCoordinate
        func sane(_ values: [Double]) -> Bool { values.allSatisfy { $0.isFinite && abs($0) <= limit } }
        let fix = "write metres on the plan, within ±\(Int(limit)) m of its origin"
        for floor in floors {
            let numbers =
                (floor.bounds.map { [$0.minimum.x, $0.minimum.y, $0.maximum.x, $0.maximum.y] } ?? [])
                + (floor.heights.map { [$0.lowerBound, $0.upperBound] } ?? []) + [floor.tagHeight]
            if !sane(numbers) {
                problems.append(
                    FloorPlanProblem(path: ["floors", floor.id], message: "[floors.\(floor.id)] has a number no floor plan has", fix: fix))
            }
        }
        for room in rooms where !sane(room.points.flatMap { [$0.x, $0.y] }) {
            problems.append(
                FloorPlanProblem(path: ["rooms", room.id, "points"], message: "[rooms.\(room.id)] has a corner no floor plan has", fix: fix))
        }
        for receiver in receivers where !sane([receiver.x, receiver.y, receiver.z]) {
            problems.append(
                FloorPlanProblem(
                    path: ["receivers", receiver.id], message: "[receivers.\(receiver.id)] stands at a place no floor plan has", fix: fix))
        }
        guard problems.isEmpty else { return problems }
        for floor in floors {
            let extent = extent(of: floor)
            let (width, depth) = (extent.maximum.x - extent.minimum.x, extent.maximum.y - extent.minimum.y)
            if width > Self.largestFloor || depth > Self.largestFloor {
                problems.append(
                    FloorPlanProblem(
                        path: ["floors", floor.id],
                        message: "floor \(floor.id) spans \(Point.metres(width)) × \(Point.metres(depth)) m, more than the "
                            + "\(Int(Self.largestFloor)) m a side the locator searches",
                        fix: "write the plan in metres (not centimetres), or split a site into floors of at most "
                            + "\(Int(Self.largestFloor)) m a side"))
            }
        }
        guard problems.isEmpty else { return problems }
        let floorIDs = Set(floors.map(\.id))
        let floorList = floors.map(\.id).joined(separator: ", ")
        for (index, floor) in floors.enumerated() {
            if let bounds = floor.bounds, !(bounds.minimum.x < bounds.maximum.x && bounds.minimum.y < bounds.maximum.y) {
                problems.append(
                    FloorPlanProblem(
                        path: ["floors", floor.id, "bounds"],
                        message: "[floors.\(floor.id)] bounds \(bounds.minimum) to \(bounds.maximum) enclose nothing",
                        fix: "write the lowest corner first, e.g. bounds = [[0, 0], [12, 9]]"))
            }
            if floors.count > 1, floor.heights == nil {
                problems.append(
                    FloorPlanProblem(
                        path: ["floors", floor.id],
                        message: "[floors.\(floor.id)] has no heights, and the plan has \(floors.count) floors",
                        fix: "say which heights each floor spans, e.g. heights = [0, 2.8] and heights = [2.8, 5.6] above it"))
            }
            for other in floors[..<index] {
                guard let mine = floor.heights, let theirs = other.heights, mine.overlaps(theirs) else { continue }
                problems.append(
                    FloorPlanProblem(
                        path: ["floors", floor.id, "heights"],
                        message: "[floors.\(floor.id)] heights \(Point.metres(mine.lowerBound))-\(Point.metres(mine.upperBound)) m "
                            + "overlap [floors.\(other.id)]'s \(Point.metres(theirs.lowerBound))-\(Point.metres(theirs.upperBound)) m",
                        fix: "let each floor start where the one below ends, e.g. heights = [0, 2.8] and [2.8, 5.6]"))
            }
        }
        for room in rooms {
            if !floorIDs.contains(room.floor) {
                problems.append(
                    FloorPlanProblem(
                        path: ["rooms", room.id, "floor"],
                        message: "[rooms.\(room.id)] is on floor \"\(room.floor)\", which the plan does not have "
                            + "(it has: \(floorList))",
                        fix: "write one of the plan's floors, or add [floors.\(room.floor)]"))
            }
            if let problem = Self.polygonProblem(room) { problems.append(problem) }
        }
        let drawable = rooms.filter { Self.polygonProblem($0) == nil }
        for (index, room) in drawable.enumerated() {
            for other in drawable[..<index] where other.floor == room.floor {
                if let spot = Self.overlap(room, other) {
                    problems.append(
                        FloorPlanProblem(
                            path: ["rooms", room.id, "points"],
                            message: "[rooms.\(room.id)] overlaps [rooms.\(other.id)] on floor \(room.floor) (both hold \(spot))",
                            fix: "draw rooms that share a wall with the same corners on it, so neither reaches into the other"))
                }
            }
        }
        for receiver in receivers {
            guard let floor = floors.first(where: { $0.id == receiver.floor }) else {
                problems.append(
                    FloorPlanProblem(
                        path: ["receivers", receiver.id],
                        message: "[receivers.\(receiver.id)] at height \(Point.metres(receiver.z)) m is on no floor "
                            + (receiver.floor.isEmpty ? "(no floor's heights hold it)" : "(\"\(receiver.floor)\" is not a floor of the plan)")
                            + ": the plan has \(floorList.isEmpty ? "no floors" : floorList)",
                        fix: "write floor = \"<id>\" with one of the plan's floors, or a z within a floor's heights"))
                continue
            }
            if let bounds = floor.bounds,
                !(bounds.minimum.x...bounds.maximum.x).contains(receiver.x) || !(bounds.minimum.y...bounds.maximum.y).contains(receiver.y)
            {
                problems.append(
                    FloorPlanProblem(
                        path: ["receivers", receiver.id],
                        message: "[receivers.\(receiver.id)] at \(receiver.point) is outside floor \(floor.id)'s bounds "
                            + "\(bounds.minimum) to \(bounds.maximum)",
                        fix: "correct its x and y, or widen the floor's bounds"))
            }
        }
        return problems
    }

    /// Why `room` is no polygon, or nil.
    static func polygonProblem(_ room: Room) -> FloorPlanProblem? {
        let path = ["rooms", room.id, "points"]
        let points = room.points
        guard points.count >= 3 else {
            return FloorPlanProblem(
                path: path, message: "[rooms.\(room.id)] has \(points.count) corner(s); a room needs at least three",
                fix: "list its corners in order around it, e.g. points = [[0, 0], [4, 0], [4, 3], [0, 3]]")
        }
        for index in points.indices {
            let next = (index + 1) % points.count
            if points[index] == points[next] {
                return FloorPlanProblem(
                    path: path,
                    message: "[rooms.\(room.id)] corners \(index + 1) and \(next + 1) are both \(points[index])",
                    fix: "remove one of the two; the last corner joins the first without being repeated")
            }
        }
        let edges = points.indices.map { (points[$0], points[($0 + 1) % points.count]) }
        for a in edges.indices {
            for b in edges.indices where b > a + 1 && !(a == 0 && b == edges.count - 1) {
                if Geometry.segmentsTouch(edges[a].0, edges[a].1, edges[b].0, edges[b].1) {
                    return FloorPlanProblem(
                        path: path,
                        message: "[rooms.\(room.id)] crosses itself: the edge from \(edges[a].0) to \(edges[a].1) meets the one "
                            + "from \(edges[b].0) to \(edges[b].1)",
                        fix: "list the corners in order around the room, walking its walls one way")
                }
            }
        }
        guard room.area >= 0.01 else {
            return FloorPlanProblem(
                path: path, message: "[rooms.\(room.id)] encloses no area (its corners lie on one line)",
                fix: "list the corners of the room's walls, e.g. points = [[0, 0], [4, 0], [4, 3], [0, 3]]")
        }
        return nil
    }

    /// A spot inside both rooms, or nil: an edge of one properly crossing an edge of the other, or a sample (every
    /// 5 cm over where their boxes meet, coarser past 20 m, off any round coordinate a wall is drawn on) that both
    /// hold. An overlap thinner than the step whose edges never cross is not seen.
    static func overlap(_ a: Room, _ b: Room) -> Point? {
        for i in a.points.indices {
            let (a0, a1) = (a.points[i], a.points[(i + 1) % a.points.count])
            for j in b.points.indices {
                let (b0, b1) = (b.points[j], b.points[(j + 1) % b.points.count])
                if let crossing = Geometry.properCrossing(a0, a1, b0, b1) { return crossing }
            }
        }
        let low = Point(x: max(a.points.map(\.x).min()!, b.points.map(\.x).min()!), y: max(a.points.map(\.y).min()!, b.points.map(\.y).min()!))
        let high = Point(x: min(a.points.map(\.x).max()!, b.points.map(\.x).max()!), y: min(a.points.map(\.y).max()!, b.points.map(\.y).max()!))
        guard low.x < high.x, low.y < high.y else { return nil }
        // 5 cm, or coarser for large rooms: at most 400 samples a side.
        let step = max(0.05, max(high.x - low.x, high.y - low.y) / 400)
        var x = low.x + 0.0173
        while x < high.x {
            var y = low.y + 0.0131
            while y < high.y {
                let point = Point(x: x, y: y)
                if a.contains(point), b.contains(point) { return point }
                y += step
            }
            x += step
        }
        return nil
    }
}

/// Plane geometry for the plan's polygons.
enum Geometry {
    typealias Point = FloorPlan.Point

    static func cross(_ o: Point, _ a: Point, _ b: Point) -> Double { (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x) }

    static func signedArea(_ points: [Point]) -> Double {
        var sum = 0.0
        for index in points.indices {
            let (a, b) = (points[index], points[(index + 1) % points.count])
            sum += a.x * b.y - b.x * a.y
        }
        return sum / 2
    }

    /// Whether the segments share any point (crossing, touching or overlapping).
    static func segmentsTouch(_ a0: Point, _ a1: Point, _ b0: Point, _ b1: Point) -> Bool {
        let epsilon = 1e-9
        let d1 = cross(b0, b1, a0)
        let d2 = cross(b0, b1, a1)
        let d3 = cross(a0, a1, b0)
        let d4 = cross(a0, a1, b1)
        if ((d1 > epsilon && d2 < -epsilon) || (d1 < -epsilon && d2 > epsilon)),
            (d3 > epsilon && d4 < -epsilon) || (d3 < -epsilon && d4 > epsilon)
        {
            return true
        }
        func onSegment(_ p: Point, _ q: Point, _ r: Point) -> Bool {
            min(p.x, q.x) - epsilon <= r.x && r.x <= max(p.x, q.x) + epsilon && min(p.y, q.y) - epsilon <= r.y
                && r.y <= max(p.y, q.y) + epsilon
        }
        return (abs(d1) <= epsilon && onSegment(b0, b1, a0)) || (abs(d2) <= epsilon && onSegment(b0, b1, a1))
            || (abs(d3) <= epsilon && onSegment(a0, a1, b0)) || (abs(d4) <= epsilon && onSegment(a0, a1, b1))
    }

    /// Where the segments cross, when each passes strictly from one side of the other to the other side; nil when they
    /// only touch, run along each other or miss.
    static func properCrossing(_ a0: Point, _ a1: Point, _ b0: Point, _ b1: Point) -> Point? {
        let epsilon = 1e-9
        let d1 = cross(b0, b1, a0)
        let d2 = cross(b0, b1, a1)
        let d3 = cross(a0, a1, b0)
        let d4 = cross(a0, a1, b1)
        guard (d1 > epsilon && d2 < -epsilon) || (d1 < -epsilon && d2 > epsilon),
            (d3 > epsilon && d4 < -epsilon) || (d3 < -epsilon && d4 > epsilon)
        else { return nil }
        let t = d1 / (d1 - d2)
        return Point(x: a0.x + t * (a1.x - a0.x), y: a0.y + t * (a1.y - a0.y))
    }

    static func distance(_ p: Point, toSegment a: Point, _ b: Point) -> Double {
        let (dx, dy) = (b.x - a.x, b.y - a.y)
        let length = dx * dx + dy * dy
        let t = length > 0 ? min(max(((p.x - a.x) * dx + (p.y - a.y) * dy) / length, 0), 1) : 0
        let (ex, ey) = (a.x + t * dx - p.x, a.y + t * dy - p.y)
        return (ex * ex + ey * ey).squareRoot()
    }
}
