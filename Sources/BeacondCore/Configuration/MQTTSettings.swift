public import BeaconKit

/// `[mqtt]` of beacond.toml: this node as a receiver on an MQTT broker, in ESPresense's format. Off unless `broker`
/// is set; publishing presence to a broker is the administrator's explicit decision, so `publish` is empty by
/// default.
public struct MQTTSettings: Hashable, Sendable {
    public struct Broker: Hashable, Sendable, CustomStringConvertible {
        public var useTLS: Bool
        public var host: String
        public var port: Int

        public init(useTLS: Bool, host: String, port: Int) {
            self.useTLS = useTLS
            self.host = host
            self.port = port
        }

        /// `mqtt://host[:port]` (1883) or `mqtts://host[:port]` (8883); an IPv6 address in brackets.
        public init(parsing text: String) throws(BrokerError) {
            let schemes = [("mqtt://", false, 1883), ("mqtts://", true, 8883)]
            guard let (scheme, tls, defaultPort) = schemes.first(where: { text.hasPrefix($0.0) }) else {
                throw BrokerError("\"\(text)\" does not start with mqtt:// or mqtts://")
            }
            let rest = text.dropFirst(scheme.count)
            guard !rest.contains("@") else {
                throw BrokerError(
                    "\"\(text)\" holds credentials; they do not belong in the URL, where logs and status show them "
                        + "(use username and password_file)")
            }
            guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
                throw BrokerError("\"\(text)\" has a path; a broker is only mqtt[s]://host[:port]")
            }
            var host = Substring(rest)
            var portText: Substring?
            if host.hasPrefix("[") {
                guard let close = host.firstIndex(of: "]") else { throw BrokerError("\"\(text)\" has an unclosed [") }
                let after = host[host.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else { throw BrokerError("\"\(text)\" has text after the address") }
                    portText = after.dropFirst()
                }
                host = host[host.index(after: host.startIndex)..<close]
            } else if let colon = host.lastIndex(of: ":") {
                portText = host[host.index(after: colon)...]
                host = host[..<colon]
            }
            guard !host.isEmpty, !host.contains(where: { $0 == " " || $0.isNewline }) else {
                throw BrokerError("\"\(text)\" names no host")
            }
            var port = defaultPort
            if let portText {
                guard let value = Int(portText), (1...65535).contains(value) else {
                    throw BrokerError("\"\(text)\" has port \"\(portText)\"; a port is 1 to 65535")
                }
                port = value
            }
            self.init(useTLS: tls, host: String(host), port: port)
        }

        public var description: String {
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "\(useTLS ? "mqtts" : "mqtt")://\(shownHost):\(port)"
        }
    }

    public struct BrokerError: Error, Hashable, Sendable {
        public var message: String
        package init(_ message: String) { self.message = message }
    }

    /// Which beacons this node publishes.
    public enum Publication: Hashable, Sendable {
        case all
        case only([BeaconIdentityConstraint])

        public func includes(_ identity: BeaconIdentity) -> Bool {
            switch self {
            case .all: return true
            case .only(let constraints): return constraints.contains { $0.matches(identity) }
            }
        }

        public var isEmpty: Bool { self == .only([]) }
    }

    public enum ProtocolVersion: String, Hashable, Sendable, CaseIterable {
        case v5 = "5"
        case v311 = "3.1.1"
    }

    /// `broker`: nil means MQTT is off.
    public var broker: Broker?
    /// `room`: this receiver's room as written; empty means the host name. Topics carry its ESPresense slug.
    public var room: String
    public var username: String
    /// `password_file`: its path (shown in messages), and the password read from it at load (never shown).
    public var passwordFile: String
    public var password: String?
    public var caFile: String
    public var clientCertificate: String
    public var clientKey: String
    public var protocolVersion: ProtocolVersion
    public var publish: Publication
    /// `subscribe`: other receivers' readings and statuses count for this node's regions.
    public var subscribe: Bool
    /// `publish_interval`: at most one reading per beacon per this interval (the first at once).
    public var publishInterval: Duration
    /// `rssi_offset`: dB added to this receiver's RSSI before distances are computed and published.
    public var rssiOffset: Double
    /// `homeassistant`: publish Home Assistant MQTT discovery for this receiver and its published beacons.
    public var homeAssistant: Bool
    /// `discovery_prefix`: Home Assistant's discovery prefix.
    public var discoveryPrefix: String

    public init(
        broker: Broker? = nil, room: String = "", username: String = "", passwordFile: String = "",
        password: String? = nil, caFile: String = "", clientCertificate: String = "", clientKey: String = "",
        protocolVersion: ProtocolVersion = .v5, publish: Publication = .only([]), subscribe: Bool = true,
        publishInterval: Duration = .seconds(1), rssiOffset: Double = 0, homeAssistant: Bool = false,
        discoveryPrefix: String = "homeassistant"
    ) {
        self.broker = broker
        self.room = room
        self.username = username
        self.passwordFile = passwordFile
        self.password = password
        self.caFile = caFile
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
        self.protocolVersion = protocolVersion
        self.publish = publish
        self.subscribe = subscribe
        self.publishInterval = publishInterval
        self.rssiOffset = rssiOffset
        self.homeAssistant = homeAssistant
        self.discoveryPrefix = discoveryPrefix
    }

    public static let defaults = MQTTSettings()

    /// MQTT is on and this node has something to publish: the scanner must run even with no client.
    public var publishes: Bool { broker != nil && !publish.isEmpty }
}
