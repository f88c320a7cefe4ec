package import BeaconKit
package import Fleet

/// The fleet's rooms as the core knows them, and the only owner of them: this node's room while an `[mqtt]` node
/// runs, why none runs though one is configured, and every receiver numbered in this process with its room (at
/// restore, and from the node's readings), so hearings are saved by room and a new node starts knowing them.
package struct FleetRooms: Sendable {
    /// This receiver's room while a node runs; nil while none does.
    package private(set) var localRoom: String?
    /// Why `[mqtt]` is set but no node runs (libmosquitto refused a setting), for status and refusals.
    package private(set) var problem: String?
    /// Every receiver numbered in this process, with its room.
    package private(set) var rooms: [ReceiverID: String] = [:]

    package init() {}

    /// Whether a node runs.
    package var nodeRuns: Bool { localRoom != nil }

    /// A node was made (its room and the receivers it knows), or none could be (`problem`).
    package mutating func started(_ start: FleetStart) {
        localRoom = start.room
        problem = start.problem
        for receiver in start.receivers { rooms[receiver.id] = receiver.room }
    }

    /// The node stopped; the receivers it knew keep their rooms.
    package mutating func stopped(receivers: [ReceiverDirectory.Receiver]) {
        for receiver in receivers { rooms[receiver.id] = receiver.room }
        localRoom = nil
        problem = nil
    }

    /// A receiver's room as a reading or status said it.
    package mutating func learn(_ receiver: ReceiverID, _ room: String?) {
        guard let room, rooms[receiver] != room else { return }
        rooms[receiver] = room
    }

    /// The node's directory forgot the receiver (its table was full).
    package mutating func forget(_ receiver: ReceiverID) {
        rooms[receiver] = nil
    }

    /// The receivers a new node starts with: those carried over from the node it replaces, and every room numbered
    /// before (restored regions' receivers, an earlier node's), each offline until heard if `offline` says so.
    /// Their numbers and states carry over a reload, so a receiver still offline stays so.
    package func receiversForNewNode(
        carrying carried: [ReceiverDirectory.Receiver], offline: Set<ReceiverID>
    ) -> [ReceiverDirectory.Receiver] {
        var known: [ReceiverDirectory.Receiver] = carried.map { receiver in
            var receiver = receiver
            receiver.online = !offline.contains(receiver.id)
            return receiver
        }
        let carriedIDs = Set(known.map(\.id))
        for (id, room) in rooms.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !carriedIDs.contains(id) {
            known.append(ReceiverDirectory.Receiver(room: room, id: id, online: false, lastReading: nil, readings: 0))
        }
        return known
    }
}
