// What the monitor knows of remote receivers themselves, apart from the regions they heard: which are offline now,
// and each one's room.

extension RegionMonitorCore {
    /// Remote receivers' state: read when a receiver goes offline or an exit falls due, to tell which receivers may hold
    /// a region's exit.
    struct RemoteReceivers: Sendable {
        /// Remote receivers known to be offline now.
        var offline: Set<ReceiverID> = []
        /// Each remote receiver's room, as its latest reading said: only a receiver of a region's room can hold that
        /// region's exit when it goes offline.
        private var rooms: [ReceiverID: String] = [:]

        /// Notes the room `receiver`'s latest reading gave (the local scanner has none here); writes only on a change,
        /// as this runs on every sighting.
        mutating func note(_ room: String?, of receiver: ReceiverID) {
            if receiver != .local, let room, rooms[receiver] != room { rooms[receiver] = room }
        }

        /// Whether `receiver` going offline may hold the exit of a region in `regionRoom`: any receiver for a region
        /// without a room; for one with a room, only a receiver in that room (one that could place the beacon there). A
        /// receiver whose room is not known yet (none of its readings since a restart) may, as before rooms were scoped.
        func mayHold(_ receiver: ReceiverID, regionRoom: String?) -> Bool {
            guard let regionRoom, let room = rooms[receiver] else { return true }
            return room == regionRoom
        }

        mutating func forget(_ receiver: ReceiverID) {
            offline.remove(receiver)
            rooms[receiver] = nil
        }
    }
}
