package import BeaconKit
import Fleet

/// The core's wiring of `FleetPublishing` (which owns what this receiver publishes): it hands it the room
/// locator's placement, turns what it returns into effects and keeps its timer armed.
extension DaemonCore {
    /// A new node (or none): nothing published yet, every entity announced again once it connects.
    package mutating func startPublishing() {
        publishing.start(room: fleet.localRoom, configuration: configuration, monitoring: Self.monitoringConfiguration(configuration))
        armHomeAssistantTimer()
    }

    /// This receiver's own sighting.
    package mutating func observedLocally(_ observation: BeaconObservation) {
        guard publishing.isPublishing else { return }
        let rooms = clients.engine.presence
        let now = now
        publish(
            publishing.observedLocally(
                observation, at: now, placement: { rooms?.placement(of: $0) ?? .unplaced },
                nearestOther: { rooms?.distances(of: $0, at: now).values.min() }))
    }

    /// The broker connection was made (every entity and state is announced again) or lost.
    package mutating func fleetConnection(_ connected: Bool) {
        if connected {
            updatePublishing { publishing, placement in publishing.connected(placement: placement) }
        } else {
            publishing.disconnected()
        }
    }

    /// Runs `change` with the room locator's placement, publishes what it says, and arms the timer for the next
    /// deadline.
    package mutating func updatePublishing(
        _ change: (inout FleetPublishing, FleetPublishing.Placement) -> [FleetPublishing.Output]
    ) {
        guard publishing.publishesHomeAssistant else { return }
        let rooms = clients.engine.presence
        publish(change(&publishing) { rooms?.placement(of: $0) ?? .unplaced })
    }

    private mutating func publish(_ outputs: [FleetPublishing.Output]) {
        for output in outputs {
            switch output {
            case .reading(let reading, let distance): outbox.emit(.publishReading(reading, distance: distance))
            case .retained(let publications): outbox.emit(.publishRetained(publications))
            }
        }
        // Only Home Assistant's presence has a deadline: a reading alone (every local sighting) arms nothing.
        if publishing.publishesHomeAssistant { armHomeAssistantTimer() }
    }

    package mutating func armHomeAssistantTimer() {
        outbox.arm(.homeAssistant, forDeadline: publishing.nextDeadline)
    }
}
