public import BeaconKit

/// Home Assistant's entities for the beacons this node publishes (`homeassistant = true`). Each published beacon
/// gets a presence region, fed by this node's and the other receivers' sightings, whose state is its device
/// tracker's; its room sensor shows where the room locator places it. Pure and clocked: it says what to publish
/// (`Publication`, retained), and remembers what it said only while the broker connection is up (`isConnected`),
/// so a reconnection announces every entity and state again.
///
/// Where a beacon is comes from the daemon's room locator, handed in by each call that may publish
/// (`placement`), so this never reaches into the daemon.
public struct HomeAssistantPresence: Sendable {
    /// A retained MQTT message (QoS 1): an entity's config or state.
    public struct Publication: Hashable, Sendable {
        public var topic: String
        public var text: String

        public init(topic: String, text: String) {
            self.topic = topic
            self.text = text
        }
    }

    public let discovery: HomeAssistantDiscovery
    private var monitor: RegionMonitor<BeaconIdentity>
    /// Beacons given entities, in the order they were first published, at most `maximumDiscovered`.
    public private(set) var discovered: [BeaconIdentity] = []
    private var discoveredSet: Set<BeaconIdentity> = []
    /// What was last published per beacon (device tracker, room sensor), so a sighting publishes only a change.
    private var published: [BeaconIdentity: (tracker: String, room: String)] = [:]
    public private(set) var isConnected = false
    /// The position last published per beacon (its attributes), so one worked out again the same is not sent again.
    private var publishedPositions: [BeaconIdentity: Position] = [:]

    public static let maximumDiscovered = 1000

    public init(discovery: HomeAssistantDiscovery, monitoring: MonitoringConfiguration) {
        self.discovery = discovery
        monitor = RegionMonitor(configuration: monitoring)
    }

    /// When `advance` next has something to do.
    public var nextDeadline: Timestamp? { monitor.nextDeadline }

    /// The presence regions again with new exit settings (a reload), every beacon's region as it was.
    public mutating func reconfigure(_ monitoring: MonitoringConfiguration, at now: Timestamp) {
        guard monitoring != monitor.configuration else { return }
        var fresh = RegionMonitor<BeaconIdentity>(configuration: monitoring)
        for (identity, region) in monitor.regions {
            fresh.restore(region, for: identity, at: now)
            if let record = monitor.receiverRecord(for: identity) {
                fresh.restoreReceivers(record, for: identity, offline: monitor.offlineReceivers)
            }
        }
        monitor = fresh
    }

    // MARK: The connection

    /// Connected (again): the receiver's entity, then every beacon's entities and states (retained, so Home
    /// Assistant finds them whenever it restarts).
    public mutating func connected(placement: (BeaconIdentity) -> SightingRoom) -> [Publication] {
        isConnected = true
        publishedPositions = [:]
        let receiver = discovery.receiverConfig
        var publications = [Publication(topic: receiver.topic, text: receiver.payload)]
        for identity in discovered { announce(identity, placement: placement, into: &publications) }
        return publications
    }

    /// Not connected: nothing is published, so nothing is remembered as published.
    public mutating func disconnected() {
        isConnected = false
    }

    // MARK: Sightings and receivers

    /// This node's own sighting. `published`: the reading was chosen for publishing (`ReadingPublisher`), which
    /// gives a beacon its entities.
    public mutating func observe(
        _ observation: BeaconObservation, published: Bool, at now: Timestamp,
        placement: (BeaconIdentity) -> SightingRoom
    ) -> [Publication] {
        let identity = observation.frame.identity
        var publications: [Publication] = []
        if published { discover(identity, at: now, placement: placement, into: &publications) }
        var events: [MonitoringEvent<BeaconIdentity>] = []
        monitor.observe(observation, into: &events)
        changed(events, placement: placement, into: &publications)
        publishState(identity, placement: placement, into: &publications)
        return publications
    }

    /// Another receiver's reading or status (`ReceiverDirectory`), after the daemon placed it. A beacon `discovers`
    /// says this node publishes gets its entities from another receiver's reading too, so a node with no radio of its
    /// own (one that collects the others' readings) gives Home Assistant its trackers.
    public mutating func fleetInput(
        _ input: ReceiverDirectory.Input, at now: Timestamp,
        placement: (BeaconIdentity) -> SightingRoom, discovers: (BeaconIdentity) -> Bool = { _ in false }
    ) -> [Publication] {
        var events: [MonitoringEvent<BeaconIdentity>] = []
        var publications: [Publication] = []
        switch input {
        case .sighting(let identity, let rssi, _, let receiver, _, _):
            if !discoveredSet.contains(identity), discovers(identity) { discover(identity, at: now, placement: placement, into: &publications) }
            monitor.observe(identity, rssi: rssi, by: receiver, at: now, into: &events)
            changed(events, placement: placement, into: &publications)
            publishState(identity, placement: placement, into: &publications)
        case .receiverOffline(let receiver), .receiverOnline(let receiver):
            if case .receiverOffline = input {
                monitor.receiverWentOffline(receiver, at: now, into: &events)
            } else {
                monitor.receiverCameOnline(receiver, at: now, into: &events)
            }
            changed(events, placement: placement, into: &publications)
            // Rooms whose receivers went offline (or came back) change trackers without a sighting.
            for identity in discovered { publishState(identity, placement: placement, into: &publications) }
        case .receiverForgotten(let receiver, _):
            monitor.forgetReceiver(receiver)
        case .receiverHeard, .ignored, .dropped, .bridgeChanged:
            break
        }
        return publications
    }

    /// This node's own scanner cannot see: presence becomes unknown as the daemon's regions do.
    public mutating func suspendDetection(at now: Timestamp, placement: (BeaconIdentity) -> SightingRoom) -> [Publication] {
        var events: [MonitoringEvent<BeaconIdentity>] = []
        monitor.suspendDetection(at: now, into: &events)
        var publications: [Publication] = []
        changed(events, placement: placement, into: &publications)
        return publications
    }

    public mutating func resumeDetection(at now: Timestamp) {
        monitor.resumeDetection(at: now)
    }

    /// The timer at `nextDeadline` fired.
    public mutating func advance(to now: Timestamp, placement: (BeaconIdentity) -> SightingRoom) -> [Publication] {
        var events: [MonitoringEvent<BeaconIdentity>] = []
        monitor.advance(to: now, into: &events)
        var publications: [Publication] = []
        changed(events, placement: placement, into: &publications)
        return publications
    }

    /// With a floor plan: a published beacon's position (and its room), as its tracker's attributes, when it changed.
    public mutating func attributes(of identity: BeaconIdentity, position: Position, room: SightingRoom, at now: Timestamp) -> [Publication] {
        guard isConnected, discoveredSet.contains(identity), publishedPositions[identity] != position else { return [] }
        publishedPositions[identity] = position
        var name = ""
        if case .room(let placed) = room { name = placed }
        return [Publication(topic: discovery.attributesTopic(identity), text: HomeAssistantDiscovery.attributes(position, room: name, at: now))]
    }

    // MARK: Publishing

    /// A published beacon's first reading: its presence region and, while connected, its entities.
    private mutating func discover(
        _ identity: BeaconIdentity, at now: Timestamp, placement: (BeaconIdentity) -> SightingRoom,
        into publications: inout [Publication]
    ) {
        guard !discoveredSet.contains(identity), discovered.count < Self.maximumDiscovered else { return }
        discovered.append(identity)
        discoveredSet.insert(identity)
        var events: [MonitoringEvent<BeaconIdentity>] = []
        monitor.startMonitoring(
            BeaconRegion(identifier: ESPresense.deviceID(identity), constraint: BeaconIdentityConstraint(identity)),
            for: identity, at: now, into: &events)
        changed(events, placement: placement, into: &publications)
        if isConnected { announce(identity, placement: placement, into: &publications) }
    }

    private mutating func announce(
        _ identity: BeaconIdentity, placement: (BeaconIdentity) -> SightingRoom,
        into publications: inout [Publication]
    ) {
        for config in discovery.beaconConfigs(identity) {
            publications.append(Publication(topic: config.topic, text: config.payload))
        }
        published[identity] = nil
        publishState(identity, placement: placement, into: &publications)
    }

    private mutating func changed(
        _ events: [MonitoringEvent<BeaconIdentity>], placement: (BeaconIdentity) -> SightingRoom,
        into publications: inout [Publication]
    ) {
        guard isConnected else { return }
        for event in events {
            guard case .didDetermineState = event.kind else { continue }
            publishState(event.key, placement: placement, into: &publications)
        }
    }

    /// The device tracker's state (the room name while inside and placed; `home` while inside and the room cannot be
    /// said; `not_home`; `None` while unknown) and the room sensor's, each when it changed.
    private mutating func publishState(
        _ identity: BeaconIdentity, placement: (BeaconIdentity) -> SightingRoom,
        into publications: inout [Publication]
    ) {
        guard isConnected, discoveredSet.contains(identity) else { return }
        let state = monitor.state(of: identity) ?? .unknown
        var room = ""
        if case .room(let name) = placement(identity) { room = name }
        let tracker = HomeAssistantDiscovery.presence(state, room: room)
        // Not present: `not_home`, not an empty payload, which would clear the retained message.
        let shownRoom = state == .inside && !room.isEmpty ? room : (state == .outside ? "not_home" : "unknown")
        let previous = published[identity]
        if previous?.tracker != tracker { publications.append(Publication(topic: discovery.presenceTopic(identity), text: tracker)) }
        if previous?.room != shownRoom { publications.append(Publication(topic: discovery.roomTopic(identity), text: shownRoom)) }
        published[identity] = (tracker, shownRoom)
    }
}
