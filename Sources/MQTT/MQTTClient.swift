import CMosquitto
public import MainLoopKit
#if canImport(Glibc)
    import Glibc
#endif

/// What an `MQTTClient` is doing.
public enum MQTTConnectionState: Sendable, Hashable {
    /// Not started, or stopped by its owner.
    case stopped
    /// A TCP (and TLS) connection and CONNECT are under way.
    case connecting
    /// The broker accepted the connection (CONNACK 0); subscriptions are in place.
    case connected
    /// The last attempt failed or the connection was lost; the next attempt comes after `retryIn`.
    case waitingToReconnect(reason: String, retryIn: Duration)
}

/// The one Swift wrapper of libmosquitto: one `struct mosquitto` owned by this object and destroyed in `deinit`.
///
/// It runs on beacond's `MainLoop`, never on a thread of its own: the broker's socket is a loop descriptor
/// (readable → `mosquitto_loop_read`, writable while libmosquitto has bytes queued → `mosquitto_loop_write`),
/// keep-alive is a timer (`mosquitto_loop_misc`), so an idle connection costs a wake-up per keep-alive quarter
/// and nothing polls busily. libmosquitto calls back only from inside those calls, on the loop thread; what it
/// hands over (topic, payload) is copied before the callback returns, because libmosquitto frees it after.
///
/// It reconnects by itself with capped backoff and subscribes again after every accepted connection, so its owner
/// says once what it wants and watches `state`. Use it on the loop thread only.
public final class MQTTClient {
    /// `struct mosquitto *`, owned.
    private let handle: OpaquePointer
    private let loop: MainLoop
    public let options: MQTTOptions

    /// What the client is doing, with what belongs only to that: `state` is how its owner sees it.
    private enum Phase {
        case stopped
        /// CONNECT is under way; `refusal` is what CONNACK said when the broker refused, for the disconnect that
        /// follows it.
        case connecting(refusal: String?)
        case connected
        /// `retry` is the timer of the next attempt.
        case waitingToReconnect(reason: String, retryIn: Duration, retry: MainLoop.SourceID)
        /// `stop` winds the connection down: messages still arriving are not handed to the owner, who already
        /// sees `stopped`.
        case stopping

        var state: MQTTConnectionState {
            switch self {
            case .stopped, .stopping: .stopped
            case .connecting: .connecting
            case .connected: .connected
            case .waitingToReconnect(let reason, let retryIn, _): .waitingToReconnect(reason: reason, retryIn: retryIn)
            }
        }
    }

    private var phase: Phase = .stopped {
        didSet {
            let state = phase.state
            if state != oldValue.state { handlers.onStateChange?(state) }
        }
    }

    /// What the client is doing, as its owner sees it.
    public var state: MQTTConnectionState { phase.state }

    /// What the client hands its owner, on the loop thread.
    public var handlers = Handlers()

    /// What the client hands its owner. Each is called on the loop thread.
    public struct Handlers {
        /// Whenever `state` changes.
        public var onStateChange: ((MQTTConnectionState) -> Void)?
        /// Every message of a subscription.
        public var onMessage: ((MQTTMessage) -> Void)?
        /// A publication the broker refused (MQTT 5 PUBACK reason ≥ 0x80, such as 0x87 "not authorized" for an ACL
        /// that denies the topic): the topic and the broker's reason. MQTT 3.1.1 brokers drop such messages
        /// silently.
        public var onPublishRefused: ((String, String) -> Void)?
        /// The topic and size of each message dropped unread (longer than `options.maximumPayload`), so the owner
        /// can count it and say which one it was.
        public var onOversizedMessage: ((String, Int) -> Void)?

        public init() {}
    }

    /// What the owner asked of the broker that lasts (subscriptions), and what is in flight.
    private var requests = Requests()

    private struct Requests {
        /// Patterns to subscribe to on every accepted connection, in the order they were asked for.
        var subscriptions: [(pattern: String, qos: Int32)] = []
        /// Message ids of QoS > 0 publications in flight, to name them in a refusal.
        var pendingPublications: [Int32: String] = [:]
        /// Unsubscriptions sent by `stop`, not yet acknowledged.
        var pendingUnsubscriptions: Set<Int32> = []
    }

    private var backoff: ReconnectBackoff
    private var socket: (fd: Int32, source: MainLoop.SourceID, events: MainLoop.Events)?
    private var keepAliveTimer: MainLoop.SourceID?
    /// libmosquitto's last error-level log line (OpenSSL's reason for a TLS failure is only there).
    private var lastLibraryError: String?

    private static let libraryInitialized: Bool = {
        mosquitto_lib_init()
        return true
    }()

    /// Checks the options against libmosquitto (protocol, credentials, TLS files, will) without connecting.
    public init(options: MQTTOptions, loop: MainLoop) throws(MQTTError) {
        _ = Self.libraryInitialized
        guard let handle = mosquitto_new(options.clientID, true, nil) else {
            throw MQTTError(operation: "mosquitto_new", code: Int32(MOSQ_ERR_NOMEM.rawValue), message: "out of memory")
        }
        self.handle = handle
        self.loop = loop
        self.options = options
        backoff = options.reconnectBackoff
        try configure()
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        installCallbacks()
        // libmosquitto may queue a packet from inside a callback (our owner publishing on a message) without
        // writing it; looking before each poll is how the loop learns the socket needs to be writable.
        loop.addBeforePollHook { [weak self] in self?.updateSocketInterest() }
    }

    deinit {
        // Callbacks must not reach a freed object: libmosquitto calls none from destroy, but say so anyway.
        mosquitto_user_data_set(handle, nil)
        if let socket { loop.removeDescriptor(socket.source) }
        if let keepAliveTimer { loop.cancelTimer(keepAliveTimer) }
        if case .waitingToReconnect(_, _, let retry) = phase { loop.cancelTimer(retry) }
        mosquitto_destroy(handle)
    }

    private func check(_ code: Int32, _ operation: String) throws(MQTTError) {
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else { throw MQTTError(operation: operation, code: code) }
    }

    private func configure() throws(MQTTError) {
        let version = options.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, version), "protocol version")
        // Readings are small and latency matters more than packet count on a LAN.
        try check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        if options.username != nil || options.password != nil {
            try check(mosquitto_username_pw_set(handle, options.username ?? "", options.password), "username and password")
        }
        if options.useTLS {
            // libmosquitto opens the CA file here: a missing or unreadable one fails now, with a clear reason.
            if let caFile = options.caFile, access(caFile, R_OK) != 0 {
                throw MQTTError(operation: "ca_file \(caFile)", code: Int32(MOSQ_ERR_ERRNO.rawValue))
            }
            for file in [options.certificateFile, options.keyFile].compactMap({ $0 }) where access(file, R_OK) != 0 {
                throw MQTTError(operation: "client certificate \(file)", code: Int32(MOSQ_ERR_ERRNO.rawValue))
            }
            // With no CA file, the system's trust store (OpenSSL's default paths) verifies the broker.
            let code = mosquitto_tls_set(
                handle, options.caFile, options.caFile == nil ? "/etc/ssl/certs" : nil,
                options.certificateFile, options.keyFile, nil)
            try check(code, "TLS settings")
        }
        if let will = options.will {
            let code = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            }
            try check(code, "last will on \(will.topic)")
        }
    }

    // MARK: Callbacks (called by libmosquitto from inside loop_read, loop_write, loop_misc and disconnect)

    private static func client(_ userData: UnsafeMutableRawPointer?) -> MQTTClient? {
        userData.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
    }

    private func installCallbacks() {
        mosquitto_connect_v5_callback_set(handle) { _, userData, code, _, _ in
            MQTTClient.client(userData)?.connected(code)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, userData, code, _ in
            MQTTClient.client(userData)?.disconnected(code)
        }
        mosquitto_message_v5_callback_set(handle) { _, userData, message, _ in
            guard let client = MQTTClient.client(userData), let message else { return }
            client.received(message.pointee)
        }
        mosquitto_publish_v5_callback_set(handle) { _, userData, mid, reason, _ in
            MQTTClient.client(userData)?.published(mid, reason: reason)
        }
        mosquitto_unsubscribe_callback_set(handle) { _, userData, mid in
            MQTTClient.client(userData)?.requests.pendingUnsubscriptions.remove(mid)
        }
        mosquitto_log_callback_set(handle) { _, userData, level, text in
            guard level & MOSQ_LOG_ERR != 0, let text, let client = MQTTClient.client(userData) else { return }
            client.lastLibraryError = String(cString: text)
        }
    }

    private func connected(_ code: Int32) {
        guard case .connecting = phase else { return }
        guard code == 0 else {
            let text = options.protocolVersion == .v5 ? mosquitto_reason_string(code) : mosquitto_connack_string(code)
            phase = .connecting(refusal: "the broker refused the connection: " + (text.map { String(cString: $0) } ?? "code \(code)"))
            return
        }
        lastLibraryError = nil
        backoff.reset()
        phase = .connected
        // A clean session starts with no subscriptions: ask again for everything.
        for subscription in requests.subscriptions { sendSubscribe(subscription.pattern, qos: subscription.qos) }
    }

    private func disconnected(_ code: Int32) {
        removeSocket()
        let refusal: String?
        switch phase {
        case .stopped, .stopping: return
        case .connecting(let refused): refusal = refused
        case .connected, .waitingToReconnect: refusal = nil
        }
        scheduleReconnect(reason: refusal ?? (code == 0 ? "the broker closed the connection" : connectionLostText(code)))
    }

    private func connectionLostText(_ code: Int32) -> String {
        let text = MQTTError.text(code)
        guard code == Int32(MOSQ_ERR_TLS.rawValue) || code == Int32(MOSQ_ERR_PROTOCOL.rawValue),
            let detail = lastLibraryError
        else { return text }
        return "\(text): \(detail)"
    }

    private func received(_ message: mosquitto_message) {
        if case .stopping = phase { return }
        guard let topic = message.topic else { return }
        let count = Int(max(0, message.payloadlen))
        // Counted and dropped before anything is copied: a broker may pass on messages of up to 256 MB.
        guard count <= options.maximumPayload else {
            handlers.onOversizedMessage?(String(cString: topic), count)
            return
        }
        let payload: [UInt8]
        if let bytes = message.payload, count > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: count))
        } else {
            payload = []
        }
        handlers.onMessage?(MQTTMessage(topic: String(cString: topic), payload: payload, qos: Int(message.qos), retain: message.retain))
    }

    private func published(_ mid: Int32, reason: Int32) {
        let topic = requests.pendingPublications.removeValue(forKey: mid)
        guard reason >= 0x80, let topic else { return }
        handlers.onPublishRefused?(topic, mosquitto_reason_string(reason).map { String(cString: $0) } ?? "reason \(reason)")
    }

    // MARK: Connecting

    /// Starts connecting (and keeps reconnecting until `stop`). Returns at once; `state` says how it goes.
    public func start() {
        guard case .stopped = phase else { return }
        connect()
    }

    private func connect() {
        phase = .connecting(refusal: nil)
        lastLibraryError = nil
        // Resolving a host name happens here, on the loop thread (libmosquitto's getaddrinfo); an address or a
        // name in /etc/hosts costs nothing.
        let code = mosquitto_connect_async(handle, options.host, Int32(options.port), Int32(options.keepAlive))
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) || code == Int32(MOSQ_ERR_CONN_PENDING.rawValue) else {
            removeSocket()
            scheduleReconnect(reason: "cannot connect to \(options.host):\(options.port): \(connectionLostText(code))")
            return
        }
        updateSocketInterest()
        armKeepAlive()
    }

    private func scheduleReconnect(reason: String) {
        if let keepAliveTimer { loop.cancelTimer(keepAliveTimer) }
        keepAliveTimer = nil
        let delay = backoff.nextDelay()
        if case .waitingToReconnect(_, _, let retry) = phase { loop.cancelTimer(retry) }
        let retry = loop.schedule(at: .now + delay) { [weak self] in
            guard let self, case .waitingToReconnect = self.phase else { return }
            self.connect()
        }
        phase = .waitingToReconnect(reason: reason, retryIn: delay, retry: retry)
    }

    /// Ends the connection with a DISCONNECT (so the broker does not publish the will) and stops reconnecting.
    /// What was published before is written first, waiting at most `flushWithin` for the socket.
    ///
    /// The subscriptions are ended first, and what the broker still sends is read: closing a TCP socket with
    /// unread data makes the kernel reset the connection, and a broker that sees the reset before it has read the
    /// DISCONNECT publishes the will after all (seen: a node subscribed to its own status said `offline` twice).
    public func stop(flushWithin: Duration = .seconds(1)) {
        let wasConnected: Bool
        switch phase {
        case .stopped, .stopping: return
        case .waitingToReconnect(_, _, let retry):
            loop.cancelTimer(retry)
            wasConnected = false
        case .connecting: wasConnected = false
        case .connected: wasConnected = true
        }
        phase = .stopping
        if wasConnected {
            let deadline = ContinuousClock.now + flushWithin
            for subscription in requests.subscriptions {
                var mid: Int32 = 0
                if mosquitto_unsubscribe(handle, &mid, subscription.pattern) == Int32(MOSQ_ERR_SUCCESS.rawValue) {
                    requests.pendingUnsubscriptions.insert(mid)
                }
            }
            settle(until: deadline)
            _ = mosquitto_disconnect(handle)
            flush(within: max(.milliseconds(100), ContinuousClock.now.duration(to: deadline)))
        }
        if socket != nil {
            // Not connected yet, or the DISCONNECT could not be written in time: drop the connection.
            removeSocket()
            _ = mosquitto_disconnect(handle)
        }
        if let keepAliveTimer { loop.cancelTimer(keepAliveTimer) }
        keepAliveTimer = nil
        phase = .stopped
    }

    /// Reads and writes until the broker has acknowledged the unsubscriptions and QoS > 0 publications and nothing
    /// is left to write, blocking up to `deadline` (shutdown only).
    private func settle(until deadline: ContinuousClock.Instant) {
        while let socket, ContinuousClock.now < deadline,
            !requests.pendingUnsubscriptions.isEmpty || !requests.pendingPublications.isEmpty || mosquitto_want_write(handle)
        {
            let writing = mosquitto_want_write(handle)
            var descriptor = pollfd(fd: socket.fd, events: Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0), revents: 0)
            let left = ContinuousClock.now.duration(to: deadline)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&descriptor, 1, max(1, milliseconds)) > 0 else { break }
            if descriptor.revents & Int16(POLLOUT) != 0 { noticeClosedSocket(mosquitto_loop_write(handle, 1)) }
            if descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readAvailable() }
        }
        requests.pendingUnsubscriptions.removeAll()
    }

    /// Writes what libmosquitto has queued, blocking up to `within` (shutdown only: the loop is about to end).
    private func flush(within: Duration) {
        let deadline = ContinuousClock.now + within
        while let socket, mosquitto_want_write(handle), ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: socket.fd, events: Int16(POLLOUT), revents: 0)
            let left = ContinuousClock.now.duration(to: deadline)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&descriptor, 1, max(1, milliseconds)) > 0 else { break }
            _ = mosquitto_loop_write(handle, 1)
        }
    }

    // MARK: The socket on the loop

    private func updateSocketInterest() {
        // Stopped: whatever libmosquitto still holds is not watched (no callback may come after `stop`).
        if case .stopped = phase {
            removeSocket()
            return
        }
        let fd = mosquitto_socket(handle)
        guard fd >= 0 else {
            removeSocket()
            return
        }
        let events: MainLoop.Events = mosquitto_want_write(handle) ? [.readable, .writable] : .readable
        if let socket, socket.fd == fd {
            if socket.events != events {
                loop.updateDescriptor(socket.source, events: events)
                self.socket?.events = events
            }
            return
        }
        removeSocket()
        let source = loop.addDescriptor(fd, events: events) { [weak self] ready in self?.socketReady(ready) }
        socket = (fd, source, events)
    }

    private func removeSocket() {
        if let socket { loop.removeDescriptor(socket.source) }
        socket = nil
    }

    private func socketReady(_ ready: MainLoop.Events) {
        if !ready.isDisjoint(with: [.readable, .hangUp, .error, .invalid]) { readAvailable() }
        if ready.contains(.writable), socket != nil {
            noticeClosedSocket(mosquitto_loop_write(handle, 1))
        }
        updateSocketInterest()
    }

    /// `mosquitto_loop_read` handles one packet per call (for QoS 0 traffic): call it until the socket has nothing
    /// more (EAGAIN), at most 512 times per turn so the bus and timers are not starved by a busy broker.
    private func readAvailable() {
        for _ in 0..<512 {
            errno = 0
            let code = mosquitto_loop_read(handle, 1)
            guard code == Int32(MOSQ_ERR_SUCCESS.rawValue), socket != nil else {
                noticeClosedSocket(code)
                return
            }
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
        }
    }

    /// An error usually closes the socket and calls `disconnected`; a failed TLS handshake closes it without the
    /// callback (libmosquitto 2.0's `net__socket_connect_tls`), which would leave us waiting on a dead descriptor.
    private func noticeClosedSocket(_ code: Int32) {
        guard code != Int32(MOSQ_ERR_SUCCESS.rawValue), socket != nil, mosquitto_socket(handle) < 0 else { return }
        disconnected(code)
    }

    private func armKeepAlive() {
        if let keepAliveTimer { loop.cancelTimer(keepAliveTimer) }
        let interval = Duration.milliseconds(max(1000, options.keepAlive * 250))
        keepAliveTimer = loop.schedule(at: .now + interval) { [weak self] in
            guard let self else { return }
            self.keepAliveTimer = nil
            guard self.socket != nil else { return }
            // Sends PINGREQ when due; closes the connection (calling `disconnected`) when PINGRESP is overdue.
            _ = mosquitto_loop_misc(self.handle)
            if self.socket != nil {
                self.armKeepAlive()
                self.updateSocketInterest()
            }
        }
    }

    // MARK: Publish and subscribe

    /// Queues a message. Throws while not connected (`MOSQ_ERR_NO_CONN`): QoS 0 readings are not kept for later.
    @discardableResult
    public func publish(_ message: MQTTMessage) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        let code = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, Int32(message.qos), message.retain)
        }
        try check(code, "publish to \(message.topic)")
        if message.qos > 0 { requests.pendingPublications[mid] = message.topic }
        updateSocketInterest()
        return mid
    }

    /// Subscribes now if connected, and again after every reconnect.
    public func subscribe(_ pattern: String, qos: Int = 0) throws(MQTTError) {
        try check(mosquitto_sub_topic_check(pattern), "subscribe to \(pattern)")
        guard !requests.subscriptions.contains(where: { $0.pattern == pattern }) else { return }
        requests.subscriptions.append((pattern, Int32(qos)))
        if case .connected = phase { sendSubscribe(pattern, qos: Int32(qos)) }
    }

    /// Sends an existing subscription's SUBSCRIBE again while connected: the broker replaces it and sends its
    /// retained messages again (MQTT 3.1.1 §3.8.4; MQTT 5 with the default retain handling).
    public func resendSubscription(_ pattern: String) {
        guard case .connected = phase, let subscription = requests.subscriptions.first(where: { $0.pattern == pattern }) else { return }
        sendSubscribe(subscription.pattern, qos: subscription.qos)
    }

    private func sendSubscribe(_ pattern: String, qos: Int32) {
        // Mosquitto's acl_file allows every subscription and filters what it delivers, so a SUBACK says little.
        _ = mosquitto_subscribe(handle, nil, pattern, qos)
        updateSocketInterest()
    }

    /// Whether `topic` is a valid topic to publish to (no wildcards, valid UTF-8, not too long).
    public static func isValidPublishTopic(_ topic: String) -> Bool {
        _ = libraryInitialized
        return mosquitto_pub_topic_check(topic) == Int32(MOSQ_ERR_SUCCESS.rawValue)
    }

    /// Whether `topic` matches the subscription `pattern` (with `+` and `#`), as the broker decides.
    public static func topic(_ topic: String, matches pattern: String) -> Bool {
        var result = false
        return mosquitto_topic_matches_sub(pattern, topic, &result) == Int32(MOSQ_ERR_SUCCESS.rawValue) && result
    }
}
