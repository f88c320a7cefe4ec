package import BeaconKit
import BeacondAPI
package import Fleet

/// What this receiver publishes while an `[mqtt]` node runs: its readings (`ReadingPublisher`: the beacons of
/// `publish`, at most one per `publish_interval`), and with `homeassistant = true` each published beacon's entities
/// and presence (`HomeAssistantPresence`), placed in rooms by the engine's room locator. The node only sends.
extension DaemonCore {
    /// A new node: nothing published yet, every entity announced again once it connects.
    package mutating func startPublishing() {
        cancel(.homeAssistant)
        guard let fleetRoom else {
            readingPublisher = nil
            homeAssistant = nil
            return
        }
        let settings = configuration.mqtt
        let constraints: [BeaconIdentityConstraint]? =
            switch settings.publish {
            case .all: nil
            case .only(let list):
                // `device:NAME` names an administrator's device (devices.d); one not declared matches nothing.
                list.map { configuration.resolvingDevice($0) ?? $0 }
            }
        var publisher = ReadingPublisher(constraints: constraints, interval: settings.publishInterval, rssiOffset: settings.rssiOffset)
        // Only the administrator's devices: their `irk:` ids carry the key onto the broker (as ESPresense's do).
        publisher.publishedKeys = Dictionary(
            configuration.devices.values.map { ($0.fingerprint, $0) }, uniquingKeysWith: { first, _ in first })
        readingPublisher = publisher
        homeAssistant =
            settings.homeAssistant
            ? HomeAssistantPresence(
                discovery: HomeAssistantDiscovery(prefix: settings.discoveryPrefix, room: fleetRoom, version: BeacondVersion.current),
                monitoring: Self.monitoringConfiguration(configuration))
            : nil
    }

    /// This receiver's own sighting: Home Assistant's presence first, then the reading if it is due.
    package mutating func observedLocally(_ observation: BeaconObservation) {
        guard var publisher = readingPublisher else { return }
        // Taken out while it changes, so it is not copied (it holds every beacon's last reading).
        readingPublisher = nil
        let reading = publisher.observe(observation)
        readingPublisher = publisher
        updateHomeAssistant { [now] presence, placement in
            presence.observe(observation, published: reading != nil, at: now, placement: placement)
        }
        guard let reading else { return }
        var distance: HomeAssistantPresence.Publication?
        if let discovery = homeAssistant?.discovery, let own = reading.distance {
            // The distance sensor shows the nearest receiver's distance.
            let identity = observation.frame.identity
            let others = engine.presence?.distances(of: identity, at: now).values.min()
            distance = HomeAssistantPresence.Publication(
                topic: discovery.distanceTopic(identity),
                text: ESPresenseReading(id: "", distance: min(own, others ?? own)).distanceText)
        }
        emit(.publishReading(reading, distance: distance))
    }

    /// The broker connection was made (every entity and state is announced again) or lost.
    package mutating func fleetConnection(_ connected: Bool) {
        if connected {
            updateHomeAssistant { presence, placement in presence.connected(placement: placement) }
        } else {
            homeAssistant?.disconnected()
        }
    }

    /// Runs `change` on the Home Assistant presence with the room locator's placement, publishes what it says, and
    /// arms its timer for the next deadline.
    package mutating func updateHomeAssistant(
        _ change: (inout HomeAssistantPresence, (BeaconIdentity) -> SightingRoom) -> [HomeAssistantPresence.Publication]
    ) {
        guard var presence = homeAssistant else { return }
        // Taken out while it changes, so the placement can read the engine.
        homeAssistant = nil
        let rooms = engine.presence
        let publications = change(&presence) { identity in rooms?.placement(of: identity) ?? .unplaced }
        homeAssistant = presence
        if !publications.isEmpty { emit(.publishRetained(publications)) }
        armHomeAssistantTimer()
    }

    package mutating func armHomeAssistantTimer() {
        arm(.homeAssistant, forDeadline: homeAssistant?.nextDeadline)
    }
}
