import BeaconKit
import Foundation
import Testing

/// Rooms from positions on a plan whose readings are exact: a kitchen and a hall side by side, a receiver in each
/// corner.
@Suite("PlanPlacement: rooms from positions, with hysteresis")
struct PlanPlacementTests {
    static func at(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds) }

    static let plan = FloorPlan(
        floors: [FloorPlan.Floor(id: "ground")],
        rooms: [
            FloorPlan.Room(id: "kitchen", floor: "ground", points: [.init(x: 0, y: 0), .init(x: 5, y: 0), .init(x: 5, y: 8), .init(x: 0, y: 8)]),
            FloorPlan.Room(id: "hall", floor: "ground", points: [.init(x: 5, y: 0), .init(x: 10, y: 0), .init(x: 10, y: 8), .init(x: 5, y: 8)]),
        ],
        receivers: [("k1", 0.5, 0.5), ("k2", 0.5, 7.5), ("h1", 9.5, 0.5), ("h2", 9.5, 7.5)].map {
            FloorPlan.Receiver(id: $0.0, floor: "ground", x: $0.1, y: $0.2, z: 2.5)
        })

    /// Every plan receiver's exact reading of a tag at (x, y), at `time`.
    static func hear(_ placement: inout PlanPlacement<String>, x: Double, y: Double, at time: Double, only: Set<String>? = nil) -> SightingRoom {
        for receiver in plan.receivers where only?.contains(receiver.id) ?? true {
            let distance = ((x - receiver.x) * (x - receiver.x) + (y - receiver.y) * (y - receiver.y) + 1.5 * 1.5).squareRoot()
            placement.observe("tag", rssi: -59 - 27 * log10(distance), measuredPower: -59, by: receiver.id, at: at(time))
        }
        return placement.update("tag", at: at(time))
    }

    @Test("the first position places the beacon at once; a move near the wall waits for the dwell, one deep in the room does not")
    func dwellAndDepth() {
        var placement = PlanPlacement<String>(
            plan: Self.plan, positions: PositionConfiguration(smoothing: .zero, staleAfter: .seconds(10), gridStep: 0.25, spread: 5.5))
        #expect(placement.room(of: "tag") == .unplaced)
        #expect(Self.hear(&placement, x: 2, y: 4, at: 0) == .room("kitchen"))
        #expect(placement.position(of: "tag").map { abs($0.x - 2) < 0.2 && abs($0.y - 4) < 0.2 } == true)
        // Just over the wall (0.3 m into the hall): not at once, nor after 2 s; after 3 s (the dwell) it moves.
        #expect(Self.hear(&placement, x: 5.3, y: 4, at: 1) == .room("kitchen"))
        #expect(Self.hear(&placement, x: 5.3, y: 4, at: 3) == .room("kitchen"))
        #expect(Self.hear(&placement, x: 5.3, y: 4, at: 4) == .room("hall"))
        // One stray position back in the kitchen near the wall moves nothing.
        #expect(Self.hear(&placement, x: 4.8, y: 4, at: 5) == .room("hall"))
        #expect(Self.hear(&placement, x: 5.3, y: 4, at: 6) == .room("hall"))
        // Deep in the kitchen (well over 0.5 m from its walls): at once.
        #expect(Self.hear(&placement, x: 2, y: 4, at: 7) == .room("kitchen"))
    }

    @Test("positions are worked out at most once a second: a reading between moves nothing until then")
    func interval() {
        var placement = PlanPlacement<String>(
            plan: Self.plan, positions: PositionConfiguration(smoothing: .zero, staleAfter: .seconds(10), gridStep: 0.25, spread: 5.5))
        #expect(Self.hear(&placement, x: 2, y: 4, at: 0) == .room("kitchen"))
        #expect(Self.hear(&placement, x: 8, y: 4, at: 0.5) == .room("kitchen"))
        #expect(placement.position(of: "tag").map { $0.x < 3 } == true)
        #expect(Self.hear(&placement, x: 8, y: 4, at: 1.0) == .room("hall"))
    }

    @Test("a position less sure than the limit is in no room (unknown), never a confident wrong one; an offline receiver places nothing")
    func unsureAndOffline() {
        var rooms = PlanRoomConfiguration.default
        rooms.maximumAccuracy = 4
        var placement = PlanPlacement<String>(plan: Self.plan, rooms: rooms)
        // One receiver alone: a ring around it, metres wide.
        #expect(Self.hear(&placement, x: 2, y: 2, at: 0, only: ["k1"]) == .unknown)
        #expect((placement.position(of: "tag")?.accuracy ?? 0) > 4)
        #expect(placement.position(of: "tag")?.fixes == 1)
        #expect(Self.hear(&placement, x: 2, y: 2, at: 1) == .room("kitchen"), "\(String(describing: placement.position(of: "tag")))")
        placement.receiverWentOffline("h1")
        _ = Self.hear(&placement, x: 2, y: 2, at: 2)
        #expect(placement.position(of: "tag")?.fixes == 3)
        let taken = placement.observe("tag", rssi: -60, measuredPower: -59, by: "not-on-the-plan", at: Self.at(3))
        #expect(!taken)
        #expect(placement.places("k1") && !placement.places("not-on-the-plan"))
    }

    @Test("a beacon no plan receiver heard for 10 s is placed nowhere (a room's region exits in its time); forgetting drops it")
    func unheard() {
        var placement = PlanPlacement<String>(plan: Self.plan)
        #expect(Self.hear(&placement, x: 8, y: 4, at: 0) == .room("hall"))
        #expect(placement.update("tag", at: Self.at(5)) == .room("hall"))
        #expect(placement.update("tag", at: Self.at(30)) == .unplaced)
        #expect(placement.count == 0)
        // Heard again: placed at once, with no dwell carried over from before the gap.
        #expect(Self.hear(&placement, x: 2, y: 4, at: 31) == .room("kitchen"))
        placement.forget(notHeardSince: Self.at(100))
        #expect(placement.room(of: "tag") == .unplaced && placement.count == 0)
    }

    @Test("a position in no drawn room leaves the room after the dwell: in no room, not unknown")
    func undrawn() {
        // The hall is not drawn: only the kitchen is.
        let kitchenOnly = FloorPlan(floors: Self.plan.floors, rooms: [Self.plan.rooms[0]], receivers: Self.plan.receivers)
        var placement = PlanPlacement<String>(
            plan: kitchenOnly, positions: PositionConfiguration(smoothing: .zero, staleAfter: .seconds(10), gridStep: 0.25, spread: 5.5))
        // The floor spans the receivers' places, so positions in the hall's space exist.
        #expect(Self.hear(&placement, x: 2, y: 4, at: 0) == .room("kitchen"))
        #expect(Self.hear(&placement, x: 8, y: 4, at: 1) == .room("kitchen"))
        #expect(Self.hear(&placement, x: 8, y: 4, at: 4) == .unplaced)
    }

    @Test("beacons heard only by receivers off the plan take no place in the table")
    func offThePlan() {
        var placement = PlanPlacement<String>(plan: Self.plan, capacity: 2)
        for index in 0..<5 {
            placement.observe("stranger-\(index)", rssi: -60, measuredPower: -59, by: "garage", at: Self.at(0))
            #expect(placement.update("stranger-\(index)", at: Self.at(0)) == .unplaced)
        }
        #expect(placement.count == 0)
        #expect(Self.hear(&placement, x: 8, y: 4, at: 1) == .room("hall"))
    }
}
