import BeaconKit
import Testing

@Suite("FloorPlan: rooms as polygons, and what makes a plan unusable")
struct FloorPlanTests {
    typealias Point = FloorPlan.Point

    static func points(_ corners: [(Double, Double)]) -> [Point] { corners.map { Point(x: $0.0, y: $0.1) } }

    /// An L-shaped hall (concave) beside a square kitchen, sharing the wall x = 4 from y = 0 to 3.
    static let plan = FloorPlan(
        floors: [FloorPlan.Floor(id: "ground")],
        rooms: [
            FloorPlan.Room(id: "kitchen", floor: "ground", points: points([(0, 0), (4, 0), (4, 3), (0, 3)])),
            FloorPlan.Room(id: "hall", floor: "ground", points: points([(4, 0), (8, 0), (8, 6), (6, 6), (6, 3), (4, 3)])),
        ],
        receivers: [FloorPlan.Receiver(id: "node-1", floor: "ground", x: 7, y: 5, z: 2)])

    @Test("a point is in the room whose polygon holds it; a concave room's notch is in neither")
    func containment() {
        #expect(Self.plan.room(at: Point(x: 1, y: 1), floor: "ground")?.id == "kitchen")
        #expect(Self.plan.room(at: Point(x: 7, y: 5), floor: "ground")?.id == "hall")
        // The notch of the L (x 4…6, y 3…6) belongs to no room.
        #expect(Self.plan.room(at: Point(x: 5, y: 4.5), floor: "ground") == nil)
        #expect(Self.plan.room(at: Point(x: 1, y: 1), floor: "upstairs") == nil)
        // On the shared wall: one room only, never both.
        let onWall = Self.plan.rooms.count(where: { $0.contains(Point(x: 4, y: 1.5)) })
        #expect(onWall == 1)
        #expect(Self.plan.room(ofReceiver: "node-1")?.id == "hall")
        #expect(Self.plan.problems().isEmpty)
    }

    @Test("the locator's floor spans the rooms and receivers unless bounds are given")
    func extent() {
        let floor = Self.plan.locatorFloors[0]
        #expect((floor.minimumX, floor.minimumY, floor.maximumX, floor.maximumY) == (0, 0, 8, 6))
        #expect(floor.tagHeight == 1.0)
    }

    @Test("a room that crosses itself, repeats a corner, has two corners or no area is refused, naming its points")
    func polygons() {
        func problems(_ corners: [(Double, Double)]) -> [FloorPlanProblem] {
            FloorPlan(floors: [FloorPlan.Floor(id: "g")], rooms: [FloorPlan.Room(id: "bad", floor: "g", points: Self.points(corners))], receivers: [])
                .problems()
        }
        let bowtie = problems([(0, 0), (4, 4), (4, 0), (0, 4)])
        #expect(bowtie.count == 1)
        #expect(bowtie.first?.path == ["rooms", "bad", "points"])
        #expect(bowtie.first?.message.contains("crosses itself") == true)
        #expect(problems([(0, 0), (4, 0), (4, 0), (0, 4)]).first?.message.contains("corners 2 and 3 are both (4, 0)") == true)
        #expect(problems([(0, 0), (4, 0)]).first?.message.contains("at least three") == true)
        #expect(problems([(0, 0), (2, 0), (4, 0)]).first?.message.contains("no area") == true)
        // Touching itself at a corner is crossing too.
        #expect(problems([(0, 0), (4, 0), (2, 2), (4, 4), (0, 4), (2, 2)]).first?.message.contains("crosses itself") == true)
        #expect(problems([(0, 0), (4, 0), (4, 3), (2, 1), (0, 3)]).isEmpty) // concave is fine
    }

    @Test("overlapping rooms are refused, also when one lies wholly inside the other or both are the same")
    func overlaps() {
        func plan(_ second: [(Double, Double)], floor: String = "g") -> [FloorPlanProblem] {
            FloorPlan(
                floors: [FloorPlan.Floor(id: "g", heights: 0..<3), FloorPlan.Floor(id: "up", heights: 3..<6)],
                rooms: [
                    FloorPlan.Room(id: "a", floor: "g", points: Self.points([(0, 0), (4, 0), (4, 4), (0, 4)])),
                    FloorPlan.Room(id: "b", floor: floor, points: Self.points(second)),
                ], receivers: []
            ).problems()
        }
        #expect(plan([(3, 3), (6, 3), (6, 6), (3, 6)]).first?.message.contains("[rooms.b] overlaps [rooms.a]") == true)
        #expect(plan([(1, 1), (2, 1), (2, 2), (1, 2)]).count == 1)
        #expect(plan([(0, 0), (4, 0), (4, 4), (0, 4)]).count == 1)
        #expect(plan([(4, 0), (8, 0), (8, 4), (4, 4)]).isEmpty) // sharing a wall
        #expect(plan([(4, 1), (8, 1), (8, 3), (4, 3)]).isEmpty) // sharing part of a wall
        #expect(plan([(0, 0), (4, 0), (4, 4), (0, 4)], floor: "up").isEmpty) // another floor
    }

    @Test("numbers no plan has (infinite, kilometres away, a floor drawn in centimetres) are refused, never a crash or a stall")
    func absurdNumbers() {
        let far = FloorPlan(
            floors: [FloorPlan.Floor(id: "g", heights: 0..<3)], rooms: [],
            receivers: [FloorPlan.Receiver(id: "r", floor: "", x: 1, y: 1, z: 1e19)])
        #expect(far.problems().first?.message.contains("[receivers.r] stands at a place no floor plan has") == true)
        let infinite = FloorPlan(
            floors: [FloorPlan.Floor(id: "g")], rooms: [], receivers: [FloorPlan.Receiver(id: "r", floor: "g", x: .infinity, y: 1, z: 1)])
        #expect(infinite.problems().count == 1)
        let centimetres = FloorPlan(
            floors: [FloorPlan.Floor(id: "g")],
            rooms: [FloorPlan.Room(id: "a", floor: "g", points: Self.points([(0, 0), (400, 0), (400, 300), (0, 300)]))], receivers: [])
        #expect(centimetres.problems().first?.message.contains("spans 400 × 300 m, more than the 200 m a side") == true)
        #expect(FloorPlan.Point(x: 1e300, y: .nan).description.isEmpty == false)
    }

    @Test("unknown floors, receivers on no floor or outside its bounds, and floors without or with overlapping heights")
    func references() {
        let plan = FloorPlan(
            floors: [
                FloorPlan.Floor(id: "g", heights: 0..<3, bounds: (Point(x: 0, y: 0), Point(x: 10, y: 10))),
                FloorPlan.Floor(id: "up", heights: 2.5..<6), FloorPlan.Floor(id: "attic"),
            ],
            rooms: [FloorPlan.Room(id: "study", floor: "cellar", points: Self.points([(0, 0), (1, 0), (1, 1)]))],
            receivers: [
                FloorPlan.Receiver(id: "lost", floor: "", x: 1, y: 1, z: 9),
                FloorPlan.Receiver(id: "outside", floor: "g", x: 11, y: 1, z: 1),
            ])
        let messages = plan.problems().map(\.message)
        #expect(messages.count == 5, "\(messages)")
        #expect(messages.contains { $0.contains("[floors.up] heights 2.5-6 m overlap [floors.g]'s 0-3 m") })
        #expect(messages.contains { $0.contains("[floors.attic] has no heights, and the plan has 3 floors") })
        #expect(messages.contains { $0.contains("[rooms.study] is on floor \"cellar\", which the plan does not have (it has: g, up, attic)") })
        #expect(messages.contains { $0.contains("[receivers.lost] at height 9 m is on no floor") })
        #expect(messages.contains { $0.contains("[receivers.outside] at (11, 1) is outside floor g's bounds (0, 0) to (10, 10)") })
        #expect(plan.floor(atHeight: 4)?.id == "up")
    }
}
