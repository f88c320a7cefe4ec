import BeaconKit
@testable import BeacondCore
import Fleet
import Testing

/// `FleetRooms` alone, without the core: this node's room, the problem, and every receiver's room across nodes.
@Suite("fleet rooms, the value")
struct FleetRoomsTests {
    static func receiver(_ id: UInt32, _ room: String, online: Bool = true) -> ReceiverDirectory.Receiver {
        ReceiverDirectory.Receiver(room: room, id: ReceiverID(rawValue: id), online: online, lastReading: nil, readings: 0)
    }

    @Test("a node's receivers outlive it: the next node starts knowing them, offline until heard")
    func receiversCarryOver() {
        var rooms = FleetRooms()
        #expect(!rooms.nodeRuns)
        rooms.started(FleetStart(room: "hall", receivers: [Self.receiver(1, "kitchen"), Self.receiver(2, "office")], problem: nil))
        #expect(rooms.nodeRuns && rooms.localRoom == "hall" && rooms.problem == nil)
        rooms.learn(ReceiverID(rawValue: 3), "bedroom")
        rooms.learn(ReceiverID(rawValue: 4), nil)
        rooms.forget(ReceiverID(rawValue: 2))
        rooms.stopped(receivers: [Self.receiver(1, "kitchen")])
        #expect(!rooms.nodeRuns)
        #expect(rooms.rooms == [ReceiverID(rawValue: 1): "kitchen", ReceiverID(rawValue: 3): "bedroom"])
        // A new node carries receiver 1 from the old one (online, unless the engine says it is offline); receiver 3
        // is known by its room only, offline until heard.
        let known = rooms.receiversForNewNode(carrying: [Self.receiver(1, "kitchen")], offline: [])
        #expect(known.map(\.id.rawValue) == [1, 3])
        #expect(known.map(\.online) == [true, false])
        #expect(rooms.receiversForNewNode(carrying: [Self.receiver(1, "kitchen")], offline: [ReceiverID(rawValue: 1)]).first?.online == false)
    }

    @Test("no node could be made: the problem is kept until a node stops or starts")
    func problemIsKept() {
        var rooms = FleetRooms()
        rooms.started(FleetStart(room: nil, receivers: [], problem: "libmosquitto refused the TLS settings"))
        #expect(!rooms.nodeRuns && rooms.problem == "libmosquitto refused the TLS settings")
        rooms.started(FleetStart(room: "hall", receivers: [], problem: nil))
        #expect(rooms.problem == nil)
    }
}
