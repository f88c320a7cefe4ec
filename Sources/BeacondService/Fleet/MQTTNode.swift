import BeaconKit
import BeacondAPI
import Fleet
import Logging
import MainLoopKit
import MQTT
#if canImport(Glibc)
    import Glibc
#endif

/// This daemon as one receiver on an MQTT broker, in ESPresense's format: its room's status (`online`, retained;
/// `offline` as its last will and when it stops), and a reading per published beacon. It owns the broker
/// connection (`MQTTClient`), which reconnects by itself; a reading due while not connected is counted, not kept
/// (the next one replaces it). Used on the loop thread, by the daemon only.
final class MQTTNode {
    let settings: MQTTSettings
    /// The room as topics carry it (ESPresense's slug of `room`, or of the host name).
    let room: String
    private let client: MQTTClient
    private var publisher: ReadingPublisher
    private let logger: Logger
    private(set) var readingsPublished: UInt64 = 0
    private(set) var readingsNotSent: UInt64 = 0
    private(set) var lastRefusal: String?
    /// The reason last logged, so a broker that stays down is logged once, not at every retry.
    private var loggedReason: String?
    /// The other receivers (with `subscribe`), and what their messages mean for the monitor.
    private(set) var directory: ReceiverDirectory
    /// Called with what another receiver's message means for the monitor (set by the daemon).
    var onFleetInput: ((ReceiverDirectory.Input) -> Void)?
    /// Home Assistant discovery (`homeassistant = true`): the payloads, and the presence of each published beacon
    /// as the fleet sees it (a region per beacon, fed by this node's and the other receivers' sightings), whose
    /// state is the device tracker's.
    private let discovery: HomeAssistantDiscovery?
    private var presence: RegionMonitor<BeaconIdentity>
    /// The presence monitor again with new exit settings (a reload), every published beacon's region as it was.
    func reconfigureMonitoring(_ monitoring: MonitoringConfiguration) {
        guard monitoring != presence.configuration else { return }
        var fresh = RegionMonitor<BeaconIdentity>(configuration: monitoring)
        for (identity, region) in presence.regions {
            fresh.restore(region, for: identity, at: clock())
            if let record = presence.receiverRecord(for: identity) {
                fresh.restoreReceivers(record, for: identity, offline: presence.offlineReceivers)
            }
        }
        presence = fresh
        armPresenceTimer()
    }

    /// Where a beacon is (set by the daemon: its room locator), for the device tracker's state and the room sensor.
    var roomOf: ((BeaconIdentity) -> SightingRoom)?
    /// Every receiver's distance to a beacon by room (set by the daemon: its room locator), for the distance sensor.
    var distancesOf: ((BeaconIdentity) -> [String: Double])?
    /// What was last published per beacon (device tracker, room sensor), so a sighting publishes only a change.
    private var publishedPresence: [BeaconIdentity: (tracker: String, room: String)] = [:]
    private var presenceTimer: MainLoop.SourceID?
    private let loop: MainLoop
    private let clock: @Sendable () -> Timestamp
    /// Beacons given entities, at most `maximumDiscovered`.
    private var discovered: [BeaconIdentity] = []
    static let maximumDiscovered = 1000
    /// Unusable messages are logged at most once a minute, with how many came since.
    private var dropLog = (last: ContinuousClock.Instant?.none, since: UInt64(0))

    init(
        settings: MQTTSettings, broker: MQTTSettings.Broker, loop: MainLoop, logger: Logger,
        monitoring: MonitoringConfiguration, clock: @escaping @Sendable () -> Timestamp,
        knownReceivers: [ReceiverDirectory.Receiver] = []
    ) throws(MQTTError) {
        self.settings = settings
        self.loop = loop
        self.clock = clock
        presence = RegionMonitor(configuration: monitoring)
        let name = settings.room.isEmpty ? Self.hostName() : settings.room
        room = ESPresense.roomSlug(name).isEmpty ? "beacond" : ESPresense.roomSlug(name)
        self.logger = logger
        directory = ReceiverDirectory(ownRoom: room, known: knownReceivers)
        discovery =
            settings.homeAssistant
            ? HomeAssistantDiscovery(prefix: settings.discoveryPrefix, room: room, version: BeacondVersion.current) : nil
        let constraints: [BeaconIdentityConstraint]?
        switch settings.publish {
        case .all: constraints = nil
        case .only(let list): constraints = list
        }
        publisher = ReadingPublisher(constraints: constraints, interval: settings.publishInterval, rssiOffset: settings.rssiOffset)
        let status = ESPresense.statusTopic(room: room)
        // One connection per node: the broker drops an older connection with the same id.
        let options = MQTTOptions(
            host: broker.host, port: broker.port, useTLS: broker.useTLS,
            caFile: settings.caFile.isEmpty ? nil : settings.caFile,
            certificateFile: settings.clientCertificate.isEmpty ? nil : settings.clientCertificate,
            keyFile: settings.clientKey.isEmpty ? nil : settings.clientKey,
            username: settings.username.isEmpty ? nil : settings.username, password: settings.password,
            clientID: "beacond-\(ESPresense.roomSlug(Self.hostName()))-\(room)",
            protocolVersion: settings.protocolVersion == .v5 ? .v5 : .v311,
            // The broker publishes the will 1.5 keep-alives after the node went silent: 15 s,
            // within the default exit_timeout of 30 s, so other nodes hear of it first.
            keepAlive: 10,
            will: MQTTMessage(topic: status, text: ESPresense.offline, qos: 1, retain: true))
        client = try MQTTClient(options: options, loop: loop)
        client.onStateChange = { [unowned self] state in self.stateChanged(state) }
        if settings.subscribe {
            // A dropped bridge sends no receiver's will (docs/fleet.md, "Bridging sites"). A broker whose ACL
            // hides $SYS refuses this one subscription; the rest works. First: a retained `0` (a bridge down, or
            // one long removed) then comes before the retained statuses, which say who is online after it.
            try client.subscribe(BrokerBridge.stateSubscription, qos: 1)
            // Retained statuses arrive at every (re)connection, so the directory learns who is online again.
            try client.subscribe(ESPresense.statusSubscription, qos: 1)
            try client.subscribe(ESPresense.deviceSubscription, qos: 0)
            client.onMessage = { [unowned self] message in self.received(message) }
            client.onOversizedMessage = { [unowned self] topic, bytes in
                if case .dropped(let reason) = self.directory.droppedUnread(topic: topic, bytes: bytes, limit: options.maximumPayload) {
                    self.logDrop(reason)
                }
            }
        }
        client.onPublishRefused = { [unowned self] topic, reason in
            let refusal = "\(topic): \(reason)"
            if refusal != self.lastRefusal {
                self.logger.error("the MQTT broker refused a publication to \(topic): \(reason); check its ACL for this node's user")
            }
            self.lastRefusal = refusal
        }
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "beacond" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var statusTopic: String { ESPresense.statusTopic(room: room) }

    func start() {
        logger.info("MQTT: connecting to \(settings.broker.map { "\($0)" } ?? "?") as room \(room)")
        client.start()
    }

    /// Says `offline` (a clean DISCONNECT sends no will) and disconnects. What the other receivers' state was stays
    /// with the daemon's monitor (nothing is reported on the way out).
    func stop() {
        onFleetInput = nil
        if let presenceTimer { loop.cancelTimer(presenceTimer) }
        presenceTimer = nil
        if case .connected = client.state {
            _ = try? client.publish(MQTTMessage(topic: statusTopic, text: ESPresense.offline, qos: 1, retain: true))
        }
        client.stop()
    }

    /// What the message being handled means, kept between messages so its capacity is reused.
    private var inputs: [ReceiverDirectory.Input] = []

    private func received(_ message: MQTTMessage) {
        let now = clock()
        inputs.removeAll(keepingCapacity: true)
        directory.receive(topic: message.topic, payload: message.payload, at: now, into: &inputs)
        let inputs = inputs
        // A bridge's drop takes every receiver offline at once: one line for it, not one per receiver.
        var quiet = false
        for input in inputs {
            // The daemon places the reading first, so the tracker published next carries the room it gives.
            if case .sighting = input { onFleetInput?(input) }
            presenceInput(input, at: now)
            switch input {
            case .dropped(let reason):
                logDrop(reason)
            case .ignored:
                break
            case .bridgeChanged(let name, let connected):
                quiet = true
                if connected {
                    // The retained statuses again: receivers on this side that published nothing since the drop
                    // (idle, or their beacon gone) are online again; those beyond it crossed the bridge anew.
                    client.resendSubscription(ESPresense.statusSubscription)
                    logger.notice("MQTT: bridge \(name) is connected again; the receivers' retained statuses are read again")
                } else {
                    let count = inputs.count - 1
                    logger.warning(
                        """
                        MQTT: bridge \(name) is down (its broker says so on $SYS): the \(count) other receivers that were \
                        online are offline until each is heard again, and beacons only they heard are unknown, not gone
                        """)
                }
            case .receiverOnline(let id), .receiverOffline(let id):
                if !quiet, let receiver = directory.receivers.first(where: { $0.id == id }) {
                    logger.notice("MQTT: receiver \(receiver.room) is \(receiver.online ? "online" : "offline")")
                }
                onFleetInput?(input)
                // Rooms whose receivers went offline (or came back) change trackers without a sighting.
                for identity in discovered { publishPresence(identity) }
            case .sighting:
                break
            }
        }
    }

    private func logDrop(_ reason: String) {
        let now = ContinuousClock.now
        dropLog.since += 1
        if dropLog.last.map({ now - $0 >= .seconds(60) }) ?? true {
            logger.warning("MQTT: a message of another receiver was dropped (\(dropLog.since) since the last report): \(reason)")
            dropLog = (now, 0)
        }
    }

    private func stateChanged(_ state: MQTTConnectionState) {
        if case .waitingToReconnect = state {
            // Not connected, this node hears no other receiver: what only they heard becomes unknown.
            for id in directory.brokerLost() {
                presenceInput(.receiverOffline(id), at: clock())
                onFleetInput?(.receiverOffline(id))
            }
        }
        switch state {
        case .connected:
            loggedReason = nil
            logger.notice("MQTT: connected to \(settings.broker.map { "\($0)" } ?? "?"); room \(room) online")
            do {
                try client.publish(MQTTMessage(topic: statusTopic, text: ESPresense.online, qos: 1, retain: true))
                if let discovery {
                    // Retained, so Home Assistant finds them whenever it (re)starts.
                    let receiver = discovery.receiverConfig
                    try client.publish(MQTTMessage(topic: receiver.topic, text: receiver.payload, qos: 1, retain: true))
                    for identity in discovered { try announce(identity, discovery) }
                }
            } catch {
                logger.error("MQTT: cannot publish after connecting: \(error)")
            }
        case .waitingToReconnect(let reason, let delay):
            guard reason != loggedReason else { return }
            loggedReason = reason
            logger.warning("MQTT: \(reason); retrying in \(delay.components.seconds) s and then with growing delays (beaconctl doctor explains)")
        case .connecting, .stopped:
            break
        }
    }

    /// A sighting of this receiver: published if its beacon is chosen and its interval has passed.
    func observe(_ observation: IBeaconObservation) {
        let reading = publisher.observe(observation)
        if let discovery {
            if reading != nil { discover(observation.frame.identity, discovery) }
            var events: [MonitoringEvent<BeaconIdentity>] = []
            presence.observe(observation, into: &events)
            presenceChanged(events)
            publishPresence(observation.frame.identity)
        }
        guard let reading else { return }
        guard case .connected = client.state else {
            readingsNotSent += 1
            return
        }
        do {
            try client.publish(MQTTMessage(topic: ESPresense.deviceTopic(deviceID: reading.id, room: room), text: reading.json))
            readingsPublished += 1
            if let discovery, let distance = reading.distance {
                let identity = observation.frame.identity
                let nearest = ([distance] + (distancesOf?(identity) ?? [:]).values).min() ?? distance
                try client.publish(
                    MQTTMessage(
                        topic: discovery.distanceTopic(identity),
                        text: ESPresenseReading(id: "", distance: nearest).distanceText))
            }
        } catch {
            readingsNotSent += 1
        }
    }

    // MARK: Home Assistant

    /// A published beacon's first reading: its presence region and its entities.
    private func discover(_ identity: BeaconIdentity, _ discovery: HomeAssistantDiscovery) {
        guard !discovered.contains(identity) else { return }
        guard discovered.count < Self.maximumDiscovered else { return }
        discovered.append(identity)
        var events: [MonitoringEvent<BeaconIdentity>] = []
        presence.startMonitoring(
            BeaconRegion(identifier: ESPresense.deviceID(identity), constraint: BeaconIdentityConstraint(identity)),
            for: identity, at: clock(), into: &events)
        presenceChanged(events)
        if case .connected = client.state {
            do { try announce(identity, discovery) } catch { logger.error("MQTT: cannot publish discovery: \(error)") }
        }
    }

    private func announce(_ identity: BeaconIdentity, _ discovery: HomeAssistantDiscovery) throws(MQTTError) {
        for config in discovery.beaconConfigs(identity) {
            try client.publish(MQTTMessage(topic: config.topic, text: config.payload, qos: 1, retain: true))
        }
        publishedPresence[identity] = nil
        publishPresence(identity)
    }

    /// The device tracker's state (the room name while inside and placed; `home` while inside and the room cannot be
    /// said; `not_home`; `None` while unknown) and the room sensor's, each published (retained) when it changed.
    private func publishPresence(_ identity: BeaconIdentity) {
        guard let discovery, case .connected = client.state, discovered.contains(identity) else { return }
        let state = presence.state(of: identity) ?? .unknown
        var room = ""
        if case .room(let name)? = roomOf?(identity) { room = name }
        let tracker = HomeAssistantDiscovery.presence(state, room: room)
        // Not present: `not_home`, not an empty payload, which would clear the retained message.
        let shownRoom = state == .inside && !room.isEmpty ? room : (state == .outside ? "not_home" : "unknown")
        let previous = publishedPresence[identity]
        if previous?.tracker != tracker {
            _ = try? client.publish(MQTTMessage(topic: discovery.presenceTopic(identity), text: tracker, qos: 1, retain: true))
        }
        if previous?.room != shownRoom {
            _ = try? client.publish(MQTTMessage(topic: discovery.roomTopic(identity), text: shownRoom, qos: 1, retain: true))
        }
        publishedPresence[identity] = (tracker, shownRoom)
    }

    /// What another receiver's message means for the presence of the published beacons.
    private func presenceInput(_ input: ReceiverDirectory.Input, at now: Timestamp) {
        guard discovery != nil else { return }
        var events: [MonitoringEvent<BeaconIdentity>] = []
        switch input {
        case .sighting(let identity, let rssi, _, let receiver, _, _):
            presence.observe(identity, rssi: rssi, by: receiver, at: now, into: &events)
        case .receiverOffline(let receiver):
            presence.receiverWentOffline(receiver, at: now, into: &events)
        case .receiverOnline(let receiver):
            presence.receiverCameOnline(receiver, at: now, into: &events)
        case .ignored, .dropped, .bridgeChanged:
            return
        }
        presenceChanged(events)
        if case .sighting(let identity, _, _, _, _, _) = input { publishPresence(identity) }
    }

    /// This node's own scanner cannot see (or sees again): presence follows the daemon's regions.
    func localDetection(suspended: Bool) {
        guard discovery != nil else { return }
        var events: [MonitoringEvent<BeaconIdentity>] = []
        if suspended {
            presence.suspendDetection(at: clock(), into: &events)
        } else {
            presence.resumeDetection(at: clock())
        }
        presenceChanged(events)
    }

    private func presenceChanged(_ events: [MonitoringEvent<BeaconIdentity>]) {
        if let discovery, case .connected = client.state {
            _ = discovery
            for event in events {
                guard case .didDetermineState = event.kind else { continue }
                publishPresence(event.key)
            }
        }
        armPresenceTimer()
    }

    private func armPresenceTimer() {
        if let presenceTimer { loop.cancelTimer(presenceTimer) }
        presenceTimer = nil
        guard let deadline = presence.nextDeadline else { return }
        let delay = deadline - clock()
        presenceTimer = loop.schedule(at: .now + (delay > .zero ? min(delay, .seconds(3600)) : .zero)) { [weak self] in
            guard let self else { return }
            self.presenceTimer = nil
            var events: [MonitoringEvent<BeaconIdentity>] = []
            self.presence.advance(to: self.clock(), into: &events)
            self.presenceChanged(events)
        }
    }

    /// What `GetStatus` says of this node.
    var status: MQTTNodeStatus {
        let connection: MQTTNodeStatus.Connection
        switch client.state {
        case .stopped: connection = .stopped
        case .connecting: connection = .connecting
        case .connected: connection = .connected
        case .waitingToReconnect(let reason, _): connection = .waiting(reason)
        }
        return MQTTNodeStatus(
            broker: settings.broker, connection: connection, room: room,
            readingsPublished: readingsPublished, readingsNotSent: readingsNotSent,
            lastRefusal: lastRefusal, receivers: directory.receivers,
            readingsDropped: directory.readingsDropped, lastDropped: directory.lastDropped)
    }
}
