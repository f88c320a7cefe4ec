package import BeaconKit
import BeacondAPI
package import Fleet

/// What this receiver publishes while an `[mqtt]` node runs, and the only owner of it: its readings
/// (`ReadingPublisher`: the beacons of `publish`, at most one per `publish_interval`), and with `homeassistant = true`
/// each published beacon's entities and presence (`HomeAssistantPresence`). Beacons are placed in rooms by the
/// placement the core passes in (the engine's room locator). Every change returns what to send; the node only
/// sends, and `nextDeadline` says when `advance` is due.
package struct FleetPublishing: Sendable {
    /// Where the room locator places a beacon now.
    package typealias Placement = (BeaconIdentity) -> SightingRoom

    /// What to send to the broker.
    package enum Output: Equatable, Sendable {
        /// A reading on this receiver's topic, with the Home Assistant distance sensor's new state if it has one.
        case reading(ESPresenseReading, distance: HomeAssistantPresence.Publication?)
        /// Home Assistant's retained entities and states.
        case retained([HomeAssistantPresence.Publication])
    }

    private var readings: ReadingPublisher?
    private(set) var homeAssistant: HomeAssistantPresence?

    package init() {}

    /// Whether a node runs and readings are published.
    package var isPublishing: Bool { readings != nil }
    /// Whether Home Assistant's entities are published.
    package var publishesHomeAssistant: Bool { homeAssistant != nil }
    /// When Home Assistant's presence must next be advanced (an exit timeout), if ever.
    package var nextDeadline: Timestamp? { homeAssistant?.nextDeadline }

    /// A new node in `room` (nil: none runs, nothing is published): nothing published yet, every entity announced
    /// again once it connects.
    package mutating func start(room: String?, configuration: DaemonConfiguration, monitoring: MonitoringConfiguration) {
        guard let room else { return stop() }
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
        readings = publisher
        homeAssistant =
            settings.homeAssistant
            ? HomeAssistantPresence(
                discovery: HomeAssistantDiscovery(prefix: settings.discoveryPrefix, room: room, version: BeacondVersion.current),
                monitoring: monitoring)
            : nil
    }

    /// The node stopped: nothing is published until the next starts.
    package mutating func stop() {
        readings = nil
        homeAssistant = nil
    }

    /// This receiver's own sighting: Home Assistant's presence first, then the reading if it is due. The distance
    /// sensor shows the nearest receiver's distance: `nearestOther` is the others' nearest, if any heard it.
    package mutating func observedLocally(
        _ observation: BeaconObservation, at now: Timestamp, placement: Placement, nearestOther: (BeaconIdentity) -> Double?
    ) -> [Output] {
        guard var publisher = readings else { return [] }
        // Taken out while it changes, so it is not copied (it holds every beacon's last reading).
        readings = nil
        let reading = publisher.observe(observation)
        readings = publisher
        var outputs = changeHomeAssistant { $0.observe(observation, published: reading != nil, at: now, placement: placement) }
        guard let reading else { return outputs }
        var distance: HomeAssistantPresence.Publication?
        if let discovery = homeAssistant?.discovery, let own = reading.distance {
            let identity = observation.frame.identity
            let nearest = nearestOther(identity).map { min(own, $0) } ?? own
            distance = HomeAssistantPresence.Publication(
                topic: discovery.distanceTopic(identity), text: ESPresenseReading(id: "", distance: nearest).distanceText)
        }
        outputs.append(.reading(reading, distance: distance))
        return outputs
    }

    /// Another receiver's reading or status, after the engine placed it.
    package mutating func fleetInput(_ input: ReceiverDirectory.Input, at now: Timestamp, placement: Placement) -> [Output] {
        // The beacons this node publishes get Home Assistant's entities from any receiver's reading.
        let publisher = readings
        return changeHomeAssistant { $0.fleetInput(input, at: now, placement: placement, discovers: { publisher?.publishes($0) ?? false }) }
    }

    /// With a floor plan: a beacon's position as its tracker's attributes, when it changed.
    package mutating func attributes(of identity: BeaconIdentity, presence: RoomPresence, at now: Timestamp) -> [Output] {
        guard homeAssistant != nil, let position = presence.position(of: identity) else { return [] }
        return changeHomeAssistant { $0.attributes(of: identity, position: position, room: presence.placement(of: identity), at: now) }
    }

    /// The broker connection was made: every entity and state is announced again.
    package mutating func connected(placement: Placement) -> [Output] {
        changeHomeAssistant { $0.connected(placement: placement) }
    }

    /// The broker connection was lost: what was published is announced again at the next connection.
    package mutating func disconnected() {
        homeAssistant?.disconnected()
    }

    /// Nothing can be seen: presence becomes unknown rather than absent.
    package mutating func suspendDetection(at now: Timestamp, placement: Placement) -> [Output] {
        changeHomeAssistant { $0.suspendDetection(at: now, placement: placement) }
    }

    /// Seeing again: exit timeouts count from now.
    package mutating func resumeDetection(at now: Timestamp) {
        homeAssistant?.resumeDetection(at: now)
    }

    /// `nextDeadline` came.
    package mutating func advance(to now: Timestamp, placement: Placement) -> [Output] {
        changeHomeAssistant { $0.advance(to: now, placement: placement) }
    }

    /// New exit timeouts after a reload.
    package mutating func reconfigure(_ monitoring: MonitoringConfiguration, at now: Timestamp) {
        homeAssistant?.reconfigure(monitoring, at: now)
    }

    private mutating func changeHomeAssistant(
        _ change: (inout HomeAssistantPresence) -> [HomeAssistantPresence.Publication]
    ) -> [Output] {
        guard homeAssistant != nil else { return [] }
        let publications = change(&homeAssistant!)
        return publications.isEmpty ? [] : [.retained(publications)]
    }
}
