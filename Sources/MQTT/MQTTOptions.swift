/// Where and how an `MQTTClient` connects. Plain values, checked by `MQTTClient.init` (libmosquitto refuses a CA
/// file it cannot read before any connection is tried, so a bad path is an error at start, not a retry loop).
public struct MQTTOptions: Sendable, Hashable {
    public enum ProtocolVersion: Sendable, Hashable {
        case v311
        case v5
    }

    /// Host name or address of the broker.
    public var host: String
    public var port: Int
    /// `mqtts://`: TLS to the broker, verified against `caFile` (the broker's name must match its certificate).
    public var useTLS: Bool
    public var caFile: String?
    /// A client certificate and its key, for brokers that authenticate clients by certificate.
    public var certificateFile: String?
    public var keyFile: String?
    public var username: String?
    public var password: String?
    /// The client identifier the broker knows this connection by; a second connection with the same one replaces
    /// the first (so each node needs its own).
    public var clientID: String
    public var protocolVersion: ProtocolVersion
    /// Seconds between PINGREQs when nothing else is sent; the broker drops the connection after 1.5 times this.
    public var keepAlive: Int
    /// Published by the broker when this connection is lost without a DISCONNECT (the node's `offline`).
    public var will: MQTTMessage?
    /// Reconnect delays: from `initial`, doubling after each failed attempt, never above `maximum`.
    public var reconnectBackoff: ReconnectBackoff
    /// Longer messages of a subscription are dropped (counted) without being copied.
    public var maximumPayload: Int

    public init(
        host: String, port: Int, useTLS: Bool = false, caFile: String? = nil, certificateFile: String? = nil,
        keyFile: String? = nil, username: String? = nil, password: String? = nil, clientID: String,
        protocolVersion: ProtocolVersion = .v311, keepAlive: Int = 30, will: MQTTMessage? = nil,
        reconnectBackoff: ReconnectBackoff = ReconnectBackoff(), maximumPayload: Int = 65_536
    ) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.username = username
        self.password = password
        self.clientID = clientID
        self.protocolVersion = protocolVersion
        self.keepAlive = keepAlive
        self.will = will
        self.reconnectBackoff = reconnectBackoff
        self.maximumPayload = maximumPayload
    }
}

/// One application message, as published or received. The payload is copied out of libmosquitto's buffer.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: Int = 0, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: Int = 0, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }
}

/// Capped exponential backoff for reconnecting: a broker that is down is not hammered, and one that comes back
/// is found again within `maximum`. Pure, so its schedule is unit-tested.
public struct ReconnectBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration
    private(set) var failures = 0

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next attempt, after one more failure.
    public mutating func nextDelay() -> Duration {
        var delay = initial
        for _ in 0..<min(failures, 30) where delay < maximum { delay *= 2 }
        failures += 1
        return min(delay, maximum)
    }

    /// A connection was accepted: the next loss starts again from `initial`.
    public mutating func reset() { failures = 0 }
}
