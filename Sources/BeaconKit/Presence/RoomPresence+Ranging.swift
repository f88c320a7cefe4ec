/// What ranging reads from rooms: for a beacon this node's adapter did not hear, the receiver nearest it.
extension RoomPresence {
    /// The nearest receiver's calibrated, smoothed distance to `identity` from fresh readings (the smallest of
    /// `distances(of:at:)`), with the raw RSSI that receiver last reported; nil when no receiver has a fresh reading.
    /// Equal distances go to the room that sorts first, so the answer does not depend on hashing.
    public func nearestReceiver(of identity: BeaconIdentity, at now: Timestamp) -> ReceiverMeasurement? {
        var nearest: (room: String, distance: Double)?
        for (_, heard) in locator.distances(of: identity, at: now) {
            if let best = nearest, (best.distance, best.room) <= (heard.distance, heard.room) { continue }
            nearest = heard
        }
        guard let nearest else { return nil }
        let reading = latestReadings[identity]?[nearest.room]
        return ReceiverMeasurement(
            receiver: nearest.room, distance: nearest.distance, rssi: reading?.rssi,
            measuredPower: reading?.measuredPower)
    }
}
