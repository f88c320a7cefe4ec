package import BeaconKit
import Fleet

/// What this receiver publishes, sent: each change runs with the room locator's placement (`RoomPresence`, the
/// engine's), what it returns goes to the outbox as effects, and Home Assistant's timer stays armed for the next
/// deadline.
extension FleetPublishing {
    /// A new node (or none): nothing published yet, every entity announced again once it connects.
    package mutating func started(room: String?, configuration: DaemonConfiguration, _ outbox: inout CoreOutbox) {
        start(room: room, configuration: configuration, monitoring: configuration.monitoring)
        armTimer(&outbox)
    }

    /// This receiver's own sighting.
    package mutating func observed(_ observation: BeaconObservation, presence: RoomPresence?, _ outbox: inout CoreOutbox) {
        guard isPublishing else { return }
        let now = outbox.now
        let outputs = observedLocally(
            observation, at: now, placement: { presence?.placement(of: $0) ?? .unplaced },
            nearestOther: { presence?.distances(of: $0, at: now).values.min() })
        send(outputs, &outbox)
        publishAttributes(of: observation.frame.identity, presence: presence, &outbox)
    }

    /// With a floor plan and Home Assistant: `identity`'s position as its tracker's attributes, when it changed.
    /// Nothing without Home Assistant: a reading of another receiver then costs no copy of the locator.
    package mutating func publishAttributes(
        of identity: BeaconIdentity, presence: @autoclosure () -> RoomPresence?, _ outbox: inout CoreOutbox
    ) {
        guard publishesHomeAssistant, let presence = presence(), presence.plan != nil else { return }
        let outputs = attributes(of: identity, presence: presence, at: outbox.now)
        if !outputs.isEmpty { send(outputs, &outbox) }
    }

    /// The broker connection was made (every entity and state is announced again) or lost.
    package mutating func connectionChanged(_ connected: Bool, presence: @autoclosure () -> RoomPresence?, _ outbox: inout CoreOutbox) {
        if connected {
            update(presence: presence(), &outbox) { publishing, placement in publishing.connected(placement: placement) }
        } else {
            disconnected()
        }
    }

    /// Runs `change` with the room locator's placement, sends what it says, and arms the timer for the next deadline;
    /// nothing while Home Assistant's presence is not published (a reading of another receiver, 100,000 a second on a
    /// busy fleet, then costs no copy of the locator).
    package mutating func update(
        presence: @autoclosure () -> RoomPresence?, _ outbox: inout CoreOutbox, _ change: (inout FleetPublishing, Placement) -> [Output]
    ) {
        guard publishesHomeAssistant else { return }
        let rooms = presence()
        // Changed first, then sent: `send` reads the deadline the change left.
        let outputs = change(&self) { rooms?.placement(of: $0) ?? .unplaced }
        send(outputs, &outbox)
    }

    private func send(_ outputs: [Output], _ outbox: inout CoreOutbox) {
        for output in outputs {
            switch output {
            case .reading(let reading, let distance): outbox.emit(.publishReading(reading, distance: distance))
            case .retained(let publications): outbox.emit(.publishRetained(publications))
            }
        }
        // Only Home Assistant's presence has a deadline: a reading alone (every local sighting) arms nothing.
        if publishesHomeAssistant { armTimer(&outbox) }
    }

    package func armTimer(_ outbox: inout CoreOutbox) {
        outbox.arm(.homeAssistant, forDeadline: nextDeadline)
    }
}
