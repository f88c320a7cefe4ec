/// A point on the floor, metres.
public struct Point: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public func distance(to other: Point) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

/// A rectangular room.
public struct Room: Hashable, Sendable {
    public var name: String
    public var minimum: Point
    public var maximum: Point

    public init(name: String, minimum: Point, maximum: Point) {
        self.name = name
        self.minimum = minimum
        self.maximum = maximum
    }

    public var centre: Point { Point(x: (minimum.x + maximum.x) / 2, y: (minimum.y + maximum.y) / 2) }

    public func contains(_ point: Point) -> Bool {
        point.x >= minimum.x && point.x < maximum.x && point.y >= minimum.y && point.y < maximum.y
    }
}

/// The rooms of a floor, side by side, with a wall between every two: what a signal crossing from one room into
/// another loses is `wallLoss` dB per wall (log-distance path loss with wall attenuation, the multi-wall model).
public struct SimulatedFloor: Hashable, Sendable {
    public var rooms: [Room]
    /// dB lost through each wall a signal crosses.
    public var wallLoss: Double

    public init(rooms: [Room], wallLoss: Double) {
        self.rooms = rooms
        self.wallLoss = wallLoss
    }

    /// `columns` × `rows` rooms of `size` metres square, named room0, room1, … row by row.
    public static func grid(columns: Int, rows: Int, size: Double, wallLoss: Double = 5) -> SimulatedFloor {
        var rooms: [Room] = []
        for row in 0..<rows {
            for column in 0..<columns {
                rooms.append(
                    Room(
                        name: "room\(rooms.count)",
                        minimum: Point(x: Double(column) * size, y: Double(row) * size),
                        maximum: Point(x: Double(column + 1) * size, y: Double(row + 1) * size)))
            }
        }
        return SimulatedFloor(rooms: rooms, wallLoss: wallLoss)
    }

    /// The room at `point`, or nil outside every room.
    public func room(at point: Point) -> Int? {
        rooms.firstIndex { $0.contains(point) }
    }

    /// How many walls the straight line from `a` to `b` crosses: the changes of room along it, sampled every
    /// 10 cm (rooms are metres wide, so no wall is skipped).
    public func walls(from a: Point, to b: Point) -> Int {
        let steps = max(1, Int((a.distance(to: b) / 0.1).rounded(.up)))
        var crossings = 0
        var previous = room(at: a)
        for step in 1...steps {
            let fraction = Double(step) / Double(steps)
            let current = room(at: Point(x: a.x + (b.x - a.x) * fraction, y: a.y + (b.y - a.y) * fraction))
            if current != previous { crossings += 1 }
            previous = current
        }
        return crossings
    }
}
