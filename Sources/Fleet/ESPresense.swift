public import BeaconKit
import BeacondAPI
import Foundation

/// ESPresense's MQTT conventions, which beacond speaks so that ESPresense nodes, ESPresense-companion and Home
/// Assistant's `mqtt_room` work with beacond receivers unchanged. Facts from ESPresense's firmware (`src/main.cpp`,
/// `BleFingerprint.cpp`, `string_utils.cpp`); pure, no I/O.
public enum ESPresense {
    /// The topic prefix, fixed in ESPresense (`CHANNEL`).
    public static let channel = "espresense"
    /// Every reading of every node: `espresense/devices/<device id>/<room>`.
    public static let deviceSubscription = "espresense/devices/+/+"
    /// Every node's `online`/`offline`.
    public static let statusSubscription = "espresense/rooms/+/status"
    public static let online = "online"
    public static let offline = "offline"

    /// `iBeacon:<uuid>-<major>-<minor>`: the UUID in lowercase 8-4-4-4-12 form, major and minor in decimal, as
    /// ESPresense forms the id (`Sprintf("iBeacon:%s-%u-%u", …)` with NimBLE's UUID string).
    public static func deviceID(_ identity: BeaconIdentity) -> String {
        "iBeacon:\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
    }

    /// The beacon an `iBeacon:` device id names (any case, as `mqtt_room` compares them), or nil for another kind
    /// of id (`mac`, `name:`, `altBeacon:`, …) or a malformed one.
    public static func identity(fromDeviceID id: String) -> BeaconIdentity? {
        let prefix = "ibeacon:"
        guard id.count > prefix.count, id.prefix(prefix.count).lowercased() == prefix else { return nil }
        let rest = id.dropFirst(prefix.count)
        // The UUID holds four dashes itself: major and minor are the last two parts.
        let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 7, let major = UInt16(parts[5]), let minor = UInt16(parts[6]),
              let uuid = UUID(uuidString: parts[0..<5].joined(separator: "-")) else { return nil }
        return BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    /// A room name as ESPresense puts it in topics: lowercased, each run of characters other than `a-z`, `0-9`
    /// and `_` one `_`, no `_` at either end ("Living Room" → `living_room`).
    public static func roomSlug(_ name: String) -> String {
        var slug = ""
        var pendingSeparator = false
        for scalar in name.lowercased().unicodeScalars {
            let keep = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
            if keep {
                if pendingSeparator && !slug.isEmpty { slug.append("_") }
                pendingSeparator = false
                slug.unicodeScalars.append(scalar)
            } else {
                pendingSeparator = true
            }
        }
        while slug.hasSuffix("_") { slug.removeLast() }
        while slug.hasPrefix("_") { slug.removeFirst() }
        return slug
    }

    public static func deviceTopic(deviceID: String, room: String) -> String { "\(channel)/devices/\(deviceID)/\(room)" }

    public static func statusTopic(room: String) -> String { "\(channel)/rooms/\(room)/status" }

    /// What a topic under `espresense/` is.
    public enum Topic: Hashable, Sendable {
        case device(id: String, room: String)
        case roomStatus(room: String)
        case other
    }

    public static func topic(_ topic: String) -> Topic {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == channel, !parts[2].isEmpty, !parts[3].isEmpty else { return .other }
        switch parts[1] {
        case "devices": return .device(id: String(parts[2]), room: String(parts[3]))
        case "rooms" where parts[3] == "status": return .roomStatus(room: String(parts[2]))
        default: return .other
        }
    }
}

/// One receiver's reading of one device, in ESPresense's JSON (`BleFingerprint::fill`): what beacond publishes
/// and what it reads from other nodes. Keys other nodes send that beacond does not use are ignored.
public struct ESPresenseReading: Hashable, Sendable {
    /// `id`: the device id (`iBeacon:…` for an iBeacon).
    public var id: String
    /// `mac`: the advertiser's address, 12 lowercase hex digits without colons.
    public var mac: String?
    /// `rssi@1m`: the RSSI expected at one metre (the beacon's measured power unless calibrated).
    public var rssiAtOneMetre: Int?
    /// `rssi`: the smoothed RSSI, dBm, with the receiver's adjustment applied.
    public var rssi: Double?
    /// `rxAdj`: the receiver's RSSI adjustment, dB.
    public var receiverAdjustment: Int?
    /// `distance`: metres.
    public var distance: Double?
    /// `int`: the mean advertising interval seen, milliseconds.
    public var interval: Int?
    public var name: String?

    public init(id: String, mac: String? = nil, rssiAtOneMetre: Int? = nil, rssi: Double? = nil,
                receiverAdjustment: Int? = nil, distance: Double? = nil, interval: Int? = nil, name: String? = nil) {
        self.id = id
        self.mac = mac
        self.rssiAtOneMetre = rssiAtOneMetre
        self.rssi = rssi
        self.receiverAdjustment = receiverAdjustment
        self.distance = distance
        self.interval = interval
        self.name = name
    }

    /// `mac` as ESPresense writes it.
    public static func mac(_ address: BluetoothAddress) -> String {
        let hex = String(address.rawValue, radix: 16)
        return String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    /// The JSON ESPresense publishes: keys in its order, `rssi` and `distance` with exactly two decimals.
    public var json: String {
        var text = "{"
        func key(_ name: String, _ value: String) {
            if text.count > 1 { text += "," }
            text += "\"\(name)\":\(value)"
        }
        if let mac { key("mac", JSONString.quoted(mac)) }
        key("id", JSONString.quoted(id))
        if let name { key("name", JSONString.quoted(name)) }
        if let rssiAtOneMetre { key("rssi@1m", String(rssiAtOneMetre)) }
        if let rssi, rssi.isFinite { key("rssi", Self.twoDecimals(rssi)) }
        if let receiverAdjustment { key("rxAdj", String(receiverAdjustment)) }
        if let distance, distance.isFinite { key("distance", Self.twoDecimals(distance)) }
        if let interval { key("int", String(interval)) }
        return text + "}"
    }

    /// Why a payload is not a reading.
    public enum Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        case notJSON
        case notAnObject
        case missing(String)
        case wrongType(String)

        public var description: String {
            switch self {
            case .notJSON: return "not JSON"
            case .notAnObject: return "not a JSON object"
            case .missing(let key): return "no \"\(key)\""
            case .wrongType(let key): return "\"\(key)\" has the wrong type"
            }
        }
    }

    /// Reads another node's reading. `id` and `distance` are required (as `mqtt_room` requires them); the rest is
    /// optional, and a value of the wrong type is an error rather than a guess.
    public init(json bytes: [UInt8]) throws(Invalid) {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(bytes))
        } catch let error as Invalid {
            throw error
        } catch DecodingError.typeMismatch(_, let context) {
            guard let key = context.codingPath.last?.stringValue else { throw .notAnObject }
            throw .wrongType(key)
        } catch {
            throw .notJSON
        }
        guard let id = wire.id else { throw .missing("id") }
        guard !id.isEmpty else { throw .wrongType("id") }
        guard let distance = wire.distance else { throw .missing("distance") }
        func integer(_ value: Double?, _ key: String) throws(Invalid) -> Int? {
            guard let value else { return nil }
            guard abs(value) < 1e9 else { throw .wrongType(key) }
            return Int(value.rounded())
        }
        self.id = id
        mac = wire.mac
        name = wire.name
        rssiAtOneMetre = try integer(wire.rssiAtOneMetre, "rssi@1m")
        rssi = wire.rssi
        receiverAdjustment = try integer(wire.receiverAdjustment, "rxAdj")
        self.distance = distance
        interval = try integer(wire.interval, "int")
    }

    /// The keys beacond reads; JSONDecoder refuses a boolean or a string where a number belongs.
    private struct Wire: Decodable {
        var id: String?
        var mac: String?
        var name: String?
        var rssiAtOneMetre: Double?
        var rssi: Double?
        var receiverAdjustment: Double?
        var distance: Double?
        var interval: Double?

        enum CodingKeys: String, CodingKey {
            case id, mac, name, rssi, distance
            case rssiAtOneMetre = "rssi@1m"
            case receiverAdjustment = "rxAdj"
            case interval = "int"
        }
    }

    static func twoDecimals(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        guard abs(hundredths) < 1e15 else { return value < 0 ? "-1e13" : "1e13" }
        let cents = Int64(hundredths)
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return (cents < 0 ? "-" : "") + "\(magnitude / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
