import Foundation
import MainLoopKit
import MQTT
import TestKit
import Testing

/// An `MQTTClient` on its own running `MainLoop`, as the daemon holds one: every call goes through the loop
/// thread; what the client reports is collected for the test to read.
final class LoopClient: @unchecked Sendable {
    let loop: MainLoop
    private var client: MQTTClient?
    let states = Locked<[MQTTConnectionState]>([])
    let messages = Locked<[MQTTMessage]>([])
    let refusedPublications = Locked<[String]>([])

    init(_ options: MQTTOptions) throws {
        loop = try MainLoop()
        let client = try MQTTClient(options: options, loop: loop)
        let (states, messages, refusedPublications) = (self.states, self.messages, self.refusedPublications)
        client.handlers.onStateChange = { state in states.withLock { $0.append(state) } }
        client.handlers.onMessage = { message in messages.withLock { $0.append(message) } }
        client.handlers.onPublishRefused = { topic, reason in refusedPublications.withLock { $0.append("\(topic): \(reason)") } }
        self.client = client
        try loop.startThread()
    }

    deinit {
        loop.stopAndWait()
        client = nil
    }

    /// Runs `body` with the client on the loop thread and waits for it.
    @discardableResult
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (MQTTClient) throws -> T) throws -> T {
        // The client is touched only there, on the loop thread.
        try loop.onThread { [self] in try body(self.client!) }
    }

    var state: MQTTConnectionState { states.withLock { $0.last ?? .stopped } }
    var isConnected: Bool { state == .connected }
    func connectionCount() -> Int { states.withLock { $0.filter { $0 == .connected }.count } }
    func texts(on topic: String) -> [String] {
        messages.withLock { $0.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) } }
    }

    var waitingReason: String? {
        if case .waitingToReconnect(let reason, _) = state { return reason }
        return nil
    }
}

func options(_ broker: PrivateBroker, id: String, _ change: (inout MQTTOptions) -> Void = { _ in }) -> MQTTOptions {
    var options = MQTTOptions(
        host: "127.0.0.1", port: broker.port, clientID: id,
        reconnectBackoff: ReconnectBackoff(initial: .milliseconds(100), maximum: .milliseconds(400)))
    change(&options)
    return options
}

@Suite("MQTT client on a real Mosquitto broker", .serialized)
struct MQTTClientTests {
    @Test(arguments: [MQTTOptions.ProtocolVersion.v311, .v5])
    func publishesAndReceivesThroughTheBroker(version: MQTTOptions.ProtocolVersion) throws {
        let broker = try PrivateBroker()
        let reader = try LoopClient(options(broker, id: "reader") { $0.protocolVersion = version })
        let writer = try LoopClient(options(broker, id: "writer") { $0.protocolVersion = version })
        try reader.onLoop { try $0.subscribe("espresense/devices/+/+") }
        try reader.onLoop { $0.start() }
        try writer.onLoop { $0.start() }
        #expect(eventually { reader.isConnected && writer.isConnected })
        // The subscription is in place once the broker has acknowledged it; a retained message proves it either way.
        for index in 0..<20 {
            try writer.onLoop { try $0.publish(MQTTMessage(topic: "espresense/devices/iBeacon:x-1-2/kitchen", text: "{\"n\":\(index)}")) }
        }
        try writer.onLoop { try $0.publish(MQTTMessage(topic: "espresense/rooms/kitchen/status", text: "online")) }
        // A marker on a subscribed topic, published last: one publisher's messages reach a subscriber in the order
        // published, so once it is here, every earlier message that was to come (the status too, were it delivered)
        // has come.
        try writer.onLoop { try $0.publish(MQTTMessage(topic: "espresense/devices/marker/kitchen", text: "marker")) }
        #expect(eventually { reader.texts(on: "espresense/devices/marker/kitchen") == ["marker"] })
        let texts = reader.texts(on: "espresense/devices/iBeacon:x-1-2/kitchen")
        #expect(texts.count >= 10, "\(texts)")
        // In order, none twice, none from a topic not subscribed to.
        let numbers = texts.compactMap { Int($0.dropFirst(5).dropLast()) }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        #expect(reader.texts(on: "espresense/rooms/kitchen/status").isEmpty)
    }

    @Test func aWrongPasswordIsRefusedWithTheBrokersReasonAndRetried() throws {
        let broker = try PrivateBroker(users: [.init("node", password: "right")])
        let wrong = try LoopClient(
            options(broker, id: "wrong") {
                $0.username = "node"; $0.password = "wrong"
            })
        try wrong.onLoop { $0.start() }
        #expect(eventually { wrong.waitingReason != nil })
        let reason = wrong.waitingReason ?? ""
        #expect(reason.contains("refused"), "\(reason)")
        #expect(reason.lowercased().contains("not authori") || reason.lowercased().contains("bad user name or password"), "\(reason)")
        // It keeps trying (capped backoff), and is never connected.
        #expect(eventually { wrong.states.withLock { $0.filter { $0 == .connecting }.count } >= 3 })
        #expect(wrong.connectionCount() == 0)
        let right = try LoopClient(
            options(broker, id: "right") {
                $0.username = "node"; $0.password = "right"
            })
        try right.onLoop { $0.start() }
        #expect(eventually { right.isConnected })
    }

    @Test func theWillIsPublishedWhenTheConnectionIsLostButNotOnACleanStop() throws {
        let broker = try PrivateBroker()
        let watcher = try LoopClient(options(broker, id: "watcher"))
        try watcher.onLoop { try $0.subscribe("espresense/rooms/+/status") }
        try watcher.onLoop { $0.start() }
        #expect(eventually { watcher.isConnected })
        let will = MQTTMessage(topic: "espresense/rooms/hall/status", text: "offline", qos: 1, retain: true)
        // A clean stop: DISCONNECT first, so no will.
        let polite = try LoopClient(options(broker, id: "hall") { $0.will = will })
        try polite.onLoop { $0.start() }
        #expect(eventually { polite.isConnected })
        try polite.onLoop { try $0.publish(MQTTMessage(topic: "espresense/rooms/hall/status", text: "online", qos: 1, retain: true)) }
        #expect(eventually { watcher.texts(on: "espresense/rooms/hall/status") == ["online"] })
        try polite.onLoop { $0.stop() }
        #expect(polite.state == .stopped)
        // No will, shown by a marker rather than a wait. Mosquitto is single-threaded: it handles the end of hall's
        // connection in one step, logging "Client hall ..." and, were it unclean, queuing the will to the watcher,
        // before it reads anything else. A message published once that log line is there is queued to the watcher
        // after any will, and one connection delivers in order: once the marker is heard, a will would have been.
        #expect(eventually { broker.log.contains("Client hall ") }, "the broker never saw hall go: \(broker.log)")
        let marker = try LoopClient(options(broker, id: "marker"))
        try marker.onLoop { $0.start() }
        #expect(eventually { marker.isConnected })
        try marker.onLoop { try $0.publish(MQTTMessage(topic: "espresense/rooms/marker/status", text: "marker", qos: 1)) }
        #expect(eventually { watcher.texts(on: "espresense/rooms/marker/status") == ["marker"] })
        #expect(watcher.texts(on: "espresense/rooms/hall/status") == ["online"])
        // A lost connection (the broker kills it: a second client with the same id takes over): the will goes out.
        let lost = try LoopClient(options(broker, id: "hall2") { $0.will = will })
        try lost.onLoop { $0.start() }
        #expect(eventually { lost.isConnected })
        let usurper = try LoopClient(options(broker, id: "hall2"))
        try usurper.onLoop { $0.start() }
        #expect(eventually { watcher.texts(on: "espresense/rooms/hall/status").last == "offline" })
        // The will was retained: a client subscribing later reads it.
        let late = try LoopClient(options(broker, id: "late"))
        try late.onLoop { try $0.subscribe("espresense/rooms/hall/status") }
        try late.onLoop { $0.start() }
        #expect(eventually { late.messages.withLock { $0.first?.retain == true } })
        #expect(late.texts(on: "espresense/rooms/hall/status") == ["offline"])
    }

    @Test func itReconnectsAndSubscribesAgainAfterTheBrokerRestarts() throws {
        let broker = try PrivateBroker()
        let reader = try LoopClient(options(broker, id: "reader"))
        try reader.onLoop { try $0.subscribe("beacond/test") }
        try reader.onLoop { $0.start() }
        #expect(eventually { reader.isConnected })
        broker.kill()
        // Down: each failed attempt waits longer (100, 200, then 400 ms, the cap), never a busy loop.
        func delays() -> [Duration] {
            reader.states.withLock { states in
                states.compactMap { if case .waitingToReconnect(_, let delay) = $0 { return delay } else { return nil } }
            }
        }
        #expect(eventually { delays().count >= 4 })
        #expect(Array(delays().prefix(4)) == [100, 200, 400, 400].map { Duration.milliseconds($0) })
        try broker.start()
        #expect(eventually { reader.connectionCount() == 2 })
        let writer = try LoopClient(options(broker, id: "writer"))
        try writer.onLoop { $0.start() }
        #expect(eventually { writer.isConnected })
        // The subscription was made again on the new connection (a clean session has none).
        #expect(
            eventually(timeout: .seconds(5)) {
                _ = try? writer.onLoop { try $0.publish(MQTTMessage(topic: "beacond/test", text: "after restart")) }
                return !reader.texts(on: "beacond/test").isEmpty
            })
    }

    @Test func tlsWithTheRightCAConnectsAndAnUnrelatedCAIsRefusedWithTheReason() throws {
        let broker = try PrivateBroker(tls: true)
        let port = try #require(broker.tlsPort)
        let good = try LoopClient(
            options(broker, id: "tls") {
                $0.port = port; $0.useTLS = true; $0.caFile = broker.caFile
            })
        try good.onLoop { try $0.subscribe("beacond/tls") }
        try good.onLoop { $0.start() }
        #expect(eventually { good.isConnected })
        try good.onLoop { try $0.publish(MQTTMessage(topic: "beacond/tls", text: "over TLS")) }
        #expect(eventually { good.texts(on: "beacond/tls") == ["over TLS"] })

        let other = try TestCertificates.unrelatedCA(directory: broker.directory)
        let bad = try LoopClient(
            options(broker, id: "bad-ca") {
                $0.port = port; $0.useTLS = true; $0.caFile = other
            })
        try bad.onLoop { $0.start() }
        #expect(eventually { bad.waitingReason != nil })
        let reason = bad.waitingReason ?? ""
        #expect(reason.contains("certificate verify failed") || reason.contains("TLS"), "\(reason)")
        #expect(bad.connectionCount() == 0)
    }

    @Test func aBrokerThatRequiresAClientCertificateTakesOneSignedByItsCA() throws {
        let broker = try PrivateBroker(tls: true, requireClientCertificate: true)
        let port = try #require(broker.tlsPort)
        let certificates = try #require(broker.certificates)
        let (certificate, key) = try certificates.clientCertificate(directory: broker.directory, name: "node")
        let with = try LoopClient(
            options(broker, id: "with-cert") {
                $0.port = port; $0.useTLS = true; $0.caFile = broker.caFile; $0.certificateFile = certificate; $0.keyFile = key
            })
        try with.onLoop { $0.start() }
        #expect(eventually { with.isConnected })
        let without = try LoopClient(
            options(broker, id: "without-cert") {
                $0.port = port; $0.useTLS = true; $0.caFile = broker.caFile
            })
        try without.onLoop { $0.start() }
        #expect(eventually { without.waitingReason != nil })
        #expect(without.connectionCount() == 0)
    }

    @Test func aMissingCAFileIsAnErrorAtOnceNotARetryLoop() throws {
        let loop = try MainLoop()
        #expect {
            _ = try MQTTClient(
                options: MQTTOptions(
                    host: "127.0.0.1", port: 1, useTLS: true, caFile: "/nonexistent/ca.crt",
                    clientID: "x"), loop: loop)
        } throws: { error in
            "\(error)".contains("/nonexistent/ca.crt") && "\(error)".contains("No such file")
        }
    }

    @Test func anACLThatDeniesAPublishIsReportedOverMQTT5() throws {
        let broker = try PrivateBroker(
            users: [.init("node", password: "pw")],
            acl: "user node\ntopic readwrite espresense/devices/#\n")
        let node = try LoopClient(
            options(broker, id: "node") {
                $0.username = "node"; $0.password = "pw"; $0.protocolVersion = .v5
            })
        try node.onLoop { $0.start() }
        #expect(eventually { node.isConnected })
        try node.onLoop { try $0.publish(MQTTMessage(topic: "espresense/devices/a/b", text: "{}", qos: 1)) }
        try node.onLoop { try $0.publish(MQTTMessage(topic: "espresense/rooms/b/status", text: "online", qos: 1, retain: true)) }
        #expect(eventually { !node.refusedPublications.withLock { $0 }.isEmpty })
        let refused = node.refusedPublications.withLock { $0 }
        #expect(refused.count == 1 && refused[0].hasPrefix("espresense/rooms/b/status: "), "\(refused)")
        #expect(broker.log.contains("Denied PUBLISH from node"))
    }

    @Test func connectionRefusedIsRetriedWithCappedBackoff() throws {
        let port = try PrivateBroker.freePort()
        let client = try LoopClient(
            MQTTOptions(
                host: "127.0.0.1", port: port, clientID: "nobody",
                reconnectBackoff: ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200))))
        try client.onLoop { $0.start() }
        #expect(eventually { client.waitingReason != nil })
        #expect(client.waitingReason?.contains("refused") == true, "\(client.waitingReason ?? "")")
        // Every attempt starts from the retry timer, due at most `maximum` after the failure that armed it, and that
        // failure came before `stop`. A marker timer due later than that, armed on the same loop right after `stop`,
        // fires after any retry `stop` left behind (the loop runs due timers in deadline order): once it has fired,
        // an attempt after stop would be in `states`. However late a busy machine runs the loop, the order holds.
        let count = Locked(0)
        let markerFired = Locked(false)
        try client.onLoop { mqtt in
            mqtt.stop()
            count.withLock { $0 = client.states.withLock { $0.count } }
            let laterThanAnyRetry = ContinuousClock.now + mqtt.options.reconnectBackoff.maximum + .milliseconds(1)
            client.loop.schedule(at: laterThanAnyRetry) { markerFired.withLock { $0 = true } }
        }
        #expect(client.state == .stopped)
        #expect(eventually { markerFired.withLock { $0 } })
        #expect(client.states.withLock { $0.count } == count.withLock { $0 }, "no attempt after stop")
    }
}

@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    @Test func doublesFromTheInitialDelayUpToTheCapAndStartsAgainAfterAConnection() {
        var backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(30))
        let delays = (0..<8).map { _ in backoff.nextDelay() }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        backoff.reset()
        #expect(backoff.nextDelay() == .seconds(1))
    }

    @Test func topicsAreCheckedAsTheBrokerDoes() {
        #expect(MQTTClient.isValidPublishTopic("espresense/devices/iBeacon:x-1-2/kitchen"))
        #expect(!MQTTClient.isValidPublishTopic("espresense/devices/+/kitchen"))
        #expect(MQTTClient.topic("espresense/devices/a/kitchen", matches: "espresense/devices/+/+"))
        #expect(!MQTTClient.topic("espresense/rooms/kitchen/status", matches: "espresense/devices/+/+"))
    }
}
