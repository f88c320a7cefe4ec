package import Fleet

/// `[mqtt]` inputs, routed: `FleetRooms` feeds other receivers' readings and states to the engine and keeps the rooms;
/// `FleetPublishing` decides what this receiver publishes (`FleetPublishing+Outbox.swift`). The node itself (the
/// broker connection) is the daemon's.
extension DaemonCore {
    /// Another receiver's reading or status.
    package mutating func fleet(_ input: ReceiverDirectory.Input, room: String?) {
        guard let events = fleet.take(input, room: room, &clients.engine, at: now) else { return }
        engineChanged(events)
        if case .sighting = input { scheduleLastSeenSave() }
        // After the engine placed the reading, so the tracker published carries the room it gives.
        publishing.update(presence: clients.engine.presence, &outbox) { [now] in $0.fleetInput(input, at: now, placement: $1) }
        if case .sighting(let identity, _, _, _, _, _) = input {
            publishing.publishAttributes(of: identity, presence: clients.engine.presence, &outbox)
        }
    }

    /// A node was made for `[mqtt]` (or none).
    package mutating func fleetStarted(_ start: FleetStart) {
        let events = fleet.started(start, configuration: configuration, &clients.engine, &outbox)
        publishing.started(room: fleet.localRoom, configuration: configuration, &outbox)
        engineChanged(events)
    }

    /// The node said `offline` and disconnected (shutdown, or before a reload's new settings take over).
    package mutating func fleetStopped(receivers: [ReceiverDirectory.Receiver]) {
        fleet.stopped(receivers: receivers)
        publishing.stop()
        outbox.cancel(.homeAssistant)
        clients.engine.emitsObservations = false
    }
}
