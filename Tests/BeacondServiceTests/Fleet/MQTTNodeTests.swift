import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import Fleet
import Foundation
import Logging
import MainLoopKit
import MQTT
import TestKit
import Testing

/// swift-log lines kept for a test to read.
struct CollectingLogHandler: LogHandler {
    let lines: Locked<[String]>
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.level): \(event.message)") }
    }
}

/// An `MQTTNode` on its own running loop, as the daemon holds one, beside a plain client on the same broker (the
/// peer) that plays the other receivers and Home Assistant. What the node hands the daemon (`onFleetInput`), logs,
/// and publishes (as the peer hears it) is collected; the node and the peer are touched on the loop thread only.
final class NodeOnLoop: @unchecked Sendable {
    let loop: MainLoop
    private var node: MQTTNode?
    private var peer: MQTTClient?
    let fleetInputs = Locked<[ReceiverDirectory.Input]>([])
    /// What `onConnectionChange` said, in order.
    let connections = Locked<[Bool]>([])
    let logged = Locked<[String]>([])
    let heard = Locked<[MQTTMessage]>([])
    private let peerState = Locked(MQTTConnectionState.stopped)

    /// A node of room `room` on `broker` (`[mqtt]` as changed by `change`), not started.
    init(_ broker: PrivateBroker, room: String = "hall", _ change: (inout MQTTSettings) -> Void = { _ in }) throws {
        loop = try MainLoop()
        var settings = MQTTSettings(broker: MQTTSettings.Broker(useTLS: false, host: "127.0.0.1", port: broker.port), room: room)
        change(&settings)
        let (logged, fleetInputs, heard, peerState) = (self.logged, self.fleetInputs, self.heard, self.peerState)
        let node = try MQTTNode(
            settings: settings, broker: settings.broker!, loop: loop,
            logger: Logger(label: "mqtt-node-test") { _ in CollectingLogHandler(lines: logged) }, clock: WallClock.now)
        node.hooks.onFleetInput = { input in fleetInputs.withLock { $0.append(input) } }
        let connections = self.connections
        node.hooks.onConnectionChange = { connected in connections.withLock { $0.append(connected) } }
        let peer = try MQTTClient(options: MQTTOptions(host: "127.0.0.1", port: broker.port, clientID: "peer"), loop: loop)
        peer.handlers.onMessage = { message in heard.withLock { $0.append(message) } }
        peer.handlers.onStateChange = { state in peerState.withLock { $0 = state } }
        for pattern in ["espresense/#", "homeassistant/#", "beacond/#"] { try peer.subscribe(pattern, qos: 1) }
        self.node = node
        self.peer = peer
        try loop.startThread()
    }

    deinit {
        loop.stopAndWait()
        node = nil
        peer = nil
    }

    /// Runs `body` with the node on the loop thread and waits for it.
    @discardableResult
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (MQTTNode) throws -> T) throws -> T {
        try loop.onThread { [self] in try body(self.node!) }
    }

    var status: MQTTNodeStatus {
        get throws { try onLoop { $0.status } }
    }

    /// Starts the node and waits until the broker accepted it.
    func startNode() throws {
        try onLoop { $0.start() }
        #expect(eventually { (try? self.status.connection) == .connected }, "the node never connected")
    }

    /// Connects the peer and waits until its subscriptions are in place (it hears its own probe).
    func startPeer() throws {
        loop.execute { [self] in self.peer!.start() }
        #expect(eventually { peerState.withLock { $0 } == .connected }, "the peer never connected")
        #expect(
            eventually {
                loop.execute { [self] in _ = try? self.peer!.publish(MQTTMessage(topic: "espresense/probe", text: "probe")) }
                return eventually(timeout: .milliseconds(200)) { !self.texts(on: "espresense/probe").isEmpty }
            }, "the peer's subscriptions never took effect")
    }

    /// Publishes as another receiver (or anyone) would.
    func peerPublishes(_ topic: String, _ payload: [UInt8], retain: Bool = false) {
        loop.execute { [self] in _ = try? self.peer!.publish(MQTTMessage(topic: topic, payload: payload, qos: 1, retain: retain)) }
    }

    func peerPublishes(_ topic: String, _ text: String, retain: Bool = false) {
        peerPublishes(topic, Array(text.utf8), retain: retain)
    }

    func texts(on topic: String) -> [String] {
        heard.withLock { $0.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) } }
    }

    func topicsHeard(containing text: String) -> [String] {
        heard.withLock { $0.map(\.topic).filter { $0.contains(text) } }
    }

    func lines(containing text: String) -> [String] {
        logged.withLock { $0.filter { $0.contains(text) } }
    }
}

let mosquittoInstalled = FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto")

/// What the node decides, on a real Mosquitto broker: its status, what it publishes for this receiver and for Home
/// Assistant, and what the other receivers' messages mean for the daemon.
@Suite(
    "MQTT node on a real Mosquitto broker", .serialized,
    .enabled(if: mosquittoInstalled, "needs Debian's mosquitto (/usr/sbin/mosquitto): apt-get install mosquitto"))
struct MQTTNodeTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func sighting(minor: UInt16 = 2, rssi: Int8 = -65, at time: Timestamp) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 1, minor: minor), measuredPower: -59),
            rssi: rssi, address: BluetoothAddress(rawValue: 0xC1D2E3F4A5B6), addressType: 0, timestamp: time)
    }

    static let beacon = BeaconIdentity(uuid: uuid, major: 1, minor: 2)

    /// The reading the daemon would publish for `sighting(at:)` (`ReadingPublisher` decides, the node sends).
    static func reading(at time: Timestamp) -> ESPresenseReading {
        var publisher = ReadingPublisher(constraints: nil, interval: .seconds(1), rssiOffset: 0)
        return publisher.observe(sighting(at: time))!
    }
    static let deviceID = "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"

    @Test func statusFollowsTheConnectionFromConnectingToWaitingAndBack() throws {
        let broker = try PrivateBroker()
        let node = try NodeOnLoop(broker, room: "Living Room")
        let before = try node.status
        #expect(before.connection == .stopped)
        #expect(before.room == "living_room")
        #expect(before.broker == MQTTSettings.Broker(useTLS: false, host: "127.0.0.1", port: broker.port))
        // Asked to start, it is connecting until the broker's CONNACK is read, on a later turn of the loop.
        let asked = try node.onLoop { node in
            node.start()
            return node.status.connection
        }
        #expect(asked == .connecting)
        #expect(eventually { (try? node.status.connection) == .connected })
        #expect(node.lines(containing: "MQTT: connected to mqtt://127.0.0.1:\(broker.port); room living_room online").count == 1)
        broker.kill()
        #expect(eventually { if case .waiting = try? node.status.connection { true } else { false } })
        guard case .waiting(let reason) = try node.status.connection else { return }
        #expect(!reason.isEmpty)
        #expect(node.lines(containing: "MQTT: \(reason); retrying in").count == 1)
        try broker.start()
        #expect(eventually { (try? node.status.connection) == .connected })
        try node.onLoop { $0.stop() }
        #expect(try node.status.connection == .stopped)
    }

    @Test func withoutANodeTheStatusIsOffOrFailed() {
        let off = MQTTNodeStatus.withoutNode(broker: nil, problem: nil)
        #expect(off.connection == .off && off.broker == nil && off.room == "" && off.receivers.isEmpty)
        let broker = MQTTSettings.Broker(useTLS: true, host: "broker.lan", port: 8883)
        let failed = MQTTNodeStatus.withoutNode(broker: broker, problem: "ca_file /x: No such file or directory")
        #expect(failed.connection == .failed("ca_file /x: No such file or directory") && failed.broker == broker)
        #expect(MQTTNodeStatus.withoutNode(broker: broker, problem: nil).connection == .failed(""))
    }

    @Test func publishesThisReceiversReadingInESPresensesFormat() throws {
        let broker = try PrivateBroker()
        let node = try NodeOnLoop(broker, room: "Living Room") { $0.publish = .all }
        // Due before the broker accepted the node: counted, not kept.
        try node.onLoop { $0.publish(Self.reading(at: WallClock.now()), distance: nil) }
        #expect(try node.status.readingsNotSent == 1)
        try node.startPeer()
        try node.startNode()
        // Its room is online, retained, so a receiver that comes later learns it.
        #expect(eventually { node.texts(on: "espresense/rooms/living_room/status") == ["online"] })
        // The next reading goes out.
        try node.onLoop { $0.publish(Self.reading(at: WallClock.now() + .seconds(2)), distance: nil) }
        let topic = "espresense/devices/\(Self.deviceID)/living_room"
        #expect(eventually { node.texts(on: topic).count == 1 }, "no reading on \(topic): \(node.topicsHeard(containing: ""))")
        let json = try #require(node.texts(on: topic).first)
        // ESPresense's keys in its order, RSSI and distance with two decimals.
        #expect(
            json.hasPrefix("{\"mac\":\"c1d2e3f4a5b6\",\"id\":\"\(Self.deviceID)\",\"rssi@1m\":-59,\"rssi\":-65.00,\"rxAdj\":0,\"distance\":"),
            "\(json)")
        let reading = try ESPresenseReading(json: Array(json.utf8))
        #expect(reading.distance.map { $0 > 1 && $0 < 10 } == true, "−65 dBm at −59 dBm a metre is a few metres: \(json)")
        let status = try node.status
        #expect(status.readingsPublished == 1 && status.readingsNotSent == 1)
        // A clean stop says offline (no will: a DISCONNECT is sent).
        try node.onLoop { $0.stop() }
        #expect(eventually { node.texts(on: "espresense/rooms/living_room/status") == ["online", "offline"] })
    }

    @Test func homeAssistantsEntitiesAreSentRetainedAndOnlyWhileConnected() throws {
        let broker = try PrivateBroker()
        let node = try NodeOnLoop(broker)
        let entity = HomeAssistantPresence.Publication(topic: "homeassistant/device_tracker/beacond/x/config", text: "{}")
        let gone = HomeAssistantPresence.Publication(topic: "beacond/hall/gone/presence", text: "home")
        // Not connected: nothing is sent (the daemon announces everything again at the connection).
        try node.onLoop { $0.publishRetained([gone]) }
        try node.startNode()
        #expect(eventually { node.connections.withLock { $0 } == [true] }, "the connection is said to the daemon")
        let state = HomeAssistantPresence.Publication(topic: "beacond/hall/x/presence", text: "home")
        try node.onLoop { $0.publishRetained([entity, state]) }
        // Retained: the peer subscribes only now and still gets them.
        try node.startPeer()
        #expect(eventually { node.texts(on: "beacond/hall/x/presence") == ["home"] })
        #expect(node.texts(on: entity.topic) == ["{}"])
        #expect(node.texts(on: gone.topic).isEmpty, "published while not connected")
        // The distance sensor's state follows the reading it comes with.
        let distance = HomeAssistantPresence.Publication(topic: "beacond/hall/x/distance", text: "2.50")
        try node.onLoop { $0.publish(Self.reading(at: WallClock.now()), distance: distance) }
        #expect(eventually { node.texts(on: "beacond/hall/x/distance") == ["2.50"] })
    }

    @Test func anotherReceiversReadingBecomesAFleetInput() throws {
        let broker = try PrivateBroker()
        let node = try NodeOnLoop(broker)
        try node.startPeer()
        // Retained, so the node reads it whenever its subscription takes effect.
        node.peerPublishes(
            "espresense/devices/\(Self.deviceID)/kitchen",
            "{\"id\":\"\(Self.deviceID)\",\"rssi@1m\":-59,\"rssi\":-70.25,\"distance\":2.5}", retain: true)
        try node.startNode()
        #expect(eventually { node.fleetInputs.withLock { $0.count } >= 2 })
        let kitchen = try #require(try node.status.receivers.first { $0.room == "kitchen" })
        // A reading proves its receiver up: online first, then the sighting with the receiver's own numbers.
        #expect(
            node.fleetInputs.withLock { $0 } == [
                .receiverOnline(kitchen.id),
                .sighting(Self.beacon, rssi: -70, distance: 2.5, by: kitchen.id, measuredPower: -59, exactRSSI: -70.25),
            ])
        #expect(kitchen.online && kitchen.readings == 1 && kitchen.lastReading != nil)
        // This node's own room is not another receiver.
        node.peerPublishes("espresense/devices/\(Self.deviceID)/hall", "{\"id\":\"\(Self.deviceID)\",\"rssi\":-60,\"distance\":1}")
        node.peerPublishes("espresense/devices/\(Self.deviceID)/kitchen", "{\"id\":\"\(Self.deviceID)\",\"rssi\":-71,\"distance\":2.6}")
        #expect(eventually { node.fleetInputs.withLock { $0.count } >= 3 })
        #expect(try node.status.receivers.map(\.room) == ["kitchen"])
        #expect(node.fleetInputs.withLock { $0.count } == 3)
    }

    @Test func aReceiverGoesOfflineByItsStatusAndEveryOneWhenTheBrokerIsLost() throws {
        let broker = try PrivateBroker()
        let node = try NodeOnLoop(broker)
        try node.startPeer()
        node.peerPublishes("espresense/rooms/kitchen/status", "online", retain: true)
        try node.startNode()
        #expect(eventually { node.fleetInputs.withLock { $0.count } == 1 })
        let kitchen = try #require(try node.status.receivers.first { $0.room == "kitchen" })
        #expect(node.fleetInputs.withLock { $0 } == [.receiverOnline(kitchen.id)])
        node.peerPublishes("espresense/rooms/kitchen/status", "offline", retain: true)
        #expect(eventually { node.fleetInputs.withLock { $0.count } == 2 })
        #expect(node.fleetInputs.withLock { $0.last } == .receiverOffline(kitchen.id))
        #expect(try node.status.receivers.first { $0.room == "kitchen" }?.online == false)
        #expect(node.lines(containing: "MQTT: receiver kitchen is offline").count == 1)
        // Online again; then the broker goes: not connected, this node hears no receiver, so each is offline.
        node.peerPublishes("espresense/rooms/kitchen/status", "online", retain: true)
        #expect(eventually { node.fleetInputs.withLock { $0.count } == 3 })
        broker.kill()
        #expect(eventually { node.fleetInputs.withLock { $0.count } == 4 })
        #expect(node.fleetInputs.withLock { $0.last } == .receiverOffline(kitchen.id))
    }

    @Test func unusableMessagesAreDroppedCountedAndLoggedOnce() throws {
        let broker = try PrivateBroker()
        let node = try NodeOnLoop(broker)
        try node.startPeer()
        let topic = "espresense/devices/\(Self.deviceID)/attic"
        node.peerPublishes(topic, "not json", retain: true)
        try node.startNode()
        #expect(eventually { (try? node.status.readingsDropped) == 1 })
        #expect(try node.status.lastDropped?.hasPrefix("\(topic): ") == true)
        // Larger than the client reads at all (64 KiB): dropped unread, and named.
        node.peerPublishes(topic, [UInt8](repeating: UInt8(ascii: "x"), count: 70_000))
        #expect(eventually { (try? node.status.readingsDropped) == 2 })
        #expect(try node.status.lastDropped == "\(topic): 70000 bytes, more than 65536")
        // Nothing reached the daemon, the attic is no receiver, and the log said it once a minute, not per message.
        #expect(node.fleetInputs.withLock { $0 }.isEmpty)
        #expect(try node.status.receivers.isEmpty)
        #expect(node.lines(containing: "MQTT: a message of another receiver was dropped").count == 1)
        #expect(node.lines(containing: "dropped (1 since the last report): \(topic): ").count == 1)
    }
}
