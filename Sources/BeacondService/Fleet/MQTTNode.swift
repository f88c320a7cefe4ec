import BeaconKit
import BeacondAPI
import Fleet
import Logging
import MainLoopKit
import MQTT
import BeacondCore
#if canImport(Glibc)
    import Glibc
#endif

/// This daemon as one receiver on an MQTT broker, in ESPresense's format: its room's status (`online`, retained;
/// `offline` as its last will and when it stops), the readings and Home Assistant entities the daemon decides to
/// publish, and the other receivers' messages read into `ReceiverDirectory` inputs. It owns the broker connection
/// (`MQTTClient`), which reconnects by itself; a reading due while not connected is counted, not kept (the next one
/// replaces it). It decides nothing about beacons. Used on the loop thread, by the daemon only.
final class MQTTNode {
    let settings: MQTTSettings
    /// The room as topics carry it (ESPresense's slug of `room`, or of the host name).
    let room: String
    private let client: MQTTClient
    private let logger: Logger
    /// What this node's readings became (published, or due while not connected), and the broker's last refusal.
    private(set) var publishing = Publishing()
    /// What was last logged, so a broker that stays down or a flood of bad messages is not logged at every one.
    private var logged = Logged()
    /// The other receivers (with `subscribe`), and what their messages mean for the monitor.
    private(set) var directory: ReceiverDirectory
    /// What the node tells the daemon, and asks of it (set by the daemon).
    var hooks = Hooks()
    private let clock: @Sendable () -> Timestamp

    struct Publishing {
        var readingsPublished: UInt64 = 0
        var readingsNotSent: UInt64 = 0
        var lastRefusal: String?
    }

    struct Logged {
        /// The reason last logged, so a broker that stays down is logged once, not at every retry.
        var reason: String?
        /// Unusable messages are logged at most once a minute, with how many came since.
        var drops = (last: ContinuousClock.Instant?.none, since: UInt64(0))
    }

    struct Hooks {
        /// Called with what another receiver's message means for the monitor.
        var onFleetInput: ((ReceiverDirectory.Input) -> Void)?
        /// Called when the connection to the broker is made (true) or lost (false), before the receivers it takes
        /// offline: Home Assistant's entities are announced again at every connection.
        var onConnectionChange: ((Bool) -> Void)?
        /// The receivers the monitor needs (their readings keep regions inside): never evicted from a full table.
        var receiversHoldingRegions: (() -> Set<ReceiverID>)?
    }

    init(
        settings: MQTTSettings, broker: MQTTSettings.Broker, loop: MainLoop, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp, knownReceivers: [ReceiverDirectory.Receiver] = []
    ) throws(MQTTError) {
        self.settings = settings
        self.clock = clock
        room = Self.room(settings)
        self.logger = logger
        directory = ReceiverDirectory(ownRoom: room, known: knownReceivers)
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
        client.handlers.onStateChange = { [unowned self] state in self.stateChanged(state) }
        if settings.subscribe {
            // A dropped bridge sends no receiver's will (docs/fleet.md, "Bridging sites"). A broker whose ACL
            // hides $SYS refuses this one subscription; the rest works. First: a retained `0` (a bridge down, or
            // one long removed) then comes before the retained statuses, which say who is online after it.
            try client.subscribe(BrokerBridge.stateSubscription, qos: 1)
            // Retained statuses arrive at every (re)connection, so the directory learns who is online again.
            try client.subscribe(ESPresense.statusSubscription, qos: 1)
            try client.subscribe(ESPresense.deviceSubscription, qos: 0)
            client.handlers.onMessage = { [unowned self] message in self.received(message) }
            client.handlers.onOversizedMessage = { [unowned self] topic, bytes in
                if case .dropped(let reason) = self.directory.droppedUnread(topic: topic, bytes: bytes, limit: options.maximumPayload) {
                    self.logDrop(reason)
                }
            }
        }
        client.handlers.onPublishRefused = { [unowned self] topic, reason in
            let refusal = "\(topic): \(reason)"
            if refusal != self.publishing.lastRefusal {
                self.logger.error("the MQTT broker refused a publication to \(topic): \(reason); check its ACL for this node's user")
            }
            self.publishing.lastRefusal = refusal
        }
    }

    /// The room as topics carry it: ESPresense's slug of `room`, or of the host name.
    static func room(_ settings: MQTTSettings) -> String {
        let name = settings.room.isEmpty ? hostName() : settings.room
        return ESPresense.roomSlug(name).isEmpty ? "beacond" : ESPresense.roomSlug(name)
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
        hooks.onFleetInput = nil
        hooks.onConnectionChange = nil
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
        if directory.isFull { directory.holding = hooks.receiversHoldingRegions?() ?? [] }
        directory.receive(topic: message.topic, payload: message.payload, at: now, into: &inputs)
        let inputs = inputs
        // A bridge's drop takes every receiver offline at once: one line for it, not one per receiver.
        var quiet = false
        for input in inputs {
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
                hooks.onFleetInput?(input)
            case .sighting, .receiverHeard:
                hooks.onFleetInput?(input)
            case .receiverForgotten(_, let room):
                let held = "the table holds \(directory.capacity) receivers, \(directory.evicted) evicted so far"
                logger.notice("MQTT: receiver \(room) was forgotten to make room for another: \(held)")
                hooks.onFleetInput?(input)
            }
        }
    }

    private func logDrop(_ reason: String) {
        let now = ContinuousClock.now
        logged.drops.since += 1
        if logged.drops.last.map({ now - $0 >= .seconds(60) }) ?? true {
            logger.warning("MQTT: a message of another receiver was dropped (\(logged.drops.since) since the last report): \(reason)")
            logged.drops = (now, 0)
        }
    }

    private func stateChanged(_ state: MQTTConnectionState) {
        if case .waitingToReconnect = state {
            hooks.onConnectionChange?(false)
            // Not connected, this node hears no other receiver: what only they heard becomes unknown.
            for id in directory.brokerLost() { hooks.onFleetInput?(.receiverOffline(id)) }
        }
        switch state {
        case .connected:
            logged.reason = nil
            logger.notice("MQTT: connected to \(settings.broker.map { "\($0)" } ?? "?"); room \(room) online")
            do {
                try client.publish(MQTTMessage(topic: statusTopic, text: ESPresense.online, qos: 1, retain: true))
            } catch {
                logger.error("MQTT: cannot publish after connecting: \(error)")
            }
            hooks.onConnectionChange?(true)
        case .waitingToReconnect(let reason, let delay):
            guard reason != logged.reason else { return }
            logged.reason = reason
            logger.warning("MQTT: \(reason); retrying in \(delay.components.seconds) s and then with growing delays (beaconctl doctor explains)")
        case .connecting, .stopped:
            break
        }
    }

    /// This receiver's reading, as the daemon chose it (`ReadingPublisher`), and then the distance sensor's state
    /// for Home Assistant (the nearest receiver's distance) if it has one.
    func publish(_ reading: ESPresenseReading, distance: HomeAssistantPresence.Publication?) {
        guard case .connected = client.state else {
            publishing.readingsNotSent += 1
            return
        }
        do {
            try client.publish(MQTTMessage(topic: ESPresense.deviceTopic(deviceID: reading.id, room: room), text: reading.json))
            publishing.readingsPublished += 1
            if let distance { try client.publish(MQTTMessage(topic: distance.topic, text: distance.text)) }
        } catch {
            publishing.readingsNotSent += 1
        }
    }

    /// Home Assistant's entities and states, retained so it finds them whenever it (re)starts. Sent only while
    /// connected (the daemon announces everything again at the next connection).
    func publishRetained(_ publications: [HomeAssistantPresence.Publication]) {
        guard case .connected = client.state else { return }
        for publication in publications {
            do {
                try client.publish(MQTTMessage(topic: publication.topic, text: publication.text, qos: 1, retain: true))
            } catch {
                logger.error("MQTT: cannot publish \(publication.topic): \(error)")
            }
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
            readingsPublished: publishing.readingsPublished, readingsNotSent: publishing.readingsNotSent,
            lastRefusal: publishing.lastRefusal, receivers: directory.receivers,
            readingsDropped: directory.readingsDropped, lastDropped: directory.lastDropped,
            receiversEvicted: directory.evicted)
    }
}
