public import BeaconKit
import BeacondAPI

/// Home Assistant's MQTT discovery for a beacond receiver and the beacons it publishes: what to publish (retained)
/// so Home Assistant creates the entities by itself. Topics are `<prefix>/<component>/beacond/<object_id>/config`
/// (Home Assistant accepts only `[a-zA-Z0-9_-]` in node and object ids, so ids are written in that alphabet), and
/// every entity's availability is the receiver's ESPresense status topic. Pure: payloads are built, not sent.
public struct HomeAssistantDiscovery: Sendable {
    public let prefix: String
    /// The receiver's room slug (ESPresense's).
    public let room: String
    public let version: String

    public init(prefix: String, room: String, version: String) {
        self.prefix = prefix
        self.room = room
        self.version = version
    }

    /// Where a beacon's presence (`home`, `not_home`, or `None` for unknown) is published by this receiver.
    public func presenceTopic(_ identity: BeaconIdentity) -> String { "beacond/\(room)/\(Self.objectID(identity))/presence" }

    /// Where the nearest distance of a beacon (metres, two decimals) is published by this receiver.
    public func distanceTopic(_ identity: BeaconIdentity) -> String { "beacond/\(room)/\(Self.objectID(identity))/distance" }
    /// The beacon's room sensor: the room it is in while present, `not_home` when gone, `unknown` otherwise.
    public func roomTopic(_ identity: BeaconIdentity) -> String { "beacond/\(room)/\(Self.objectID(identity))/room" }

    /// With a floor plan: the beacon's position as ESPresense-companion's trackers carry it (`x`, `y`, `z`, `floor`,
    /// `room`, `confidence`, `fixes`, `accuracy`, `last_seen`), the device tracker's `json_attributes_topic`.
    public func attributesTopic(_ identity: BeaconIdentity) -> String { "beacond/\(room)/\(Self.objectID(identity))/attributes" }

    /// The attributes' JSON for `position`, in `room` ("" when it cannot be said), worked out at `time`. `confidence` is
    /// 0–100 as companion's: 100 less 10 per metre of accuracy (2 m: 80, 10 m or worse: 0), so floor-plan cards that
    /// hide fixes below a confidence hide the unsure ones.
    public static func attributes(_ position: Position, room: String, at time: Timestamp) -> String {
        let confidence = Int(min(max(100 - 10 * position.accuracy, 0), 100).rounded())
        return json([
            ("x", .number(position.x)), ("y", .number(position.y)), ("z", .number(position.z)), ("floor", .text(position.floor)),
            ("room", .text(room)), ("confidence", .number(Double(confidence))), ("fixes", .number(Double(position.fixes))),
            ("accuracy", .number(position.accuracy)), ("last_seen", .text(time.iso8601)),
        ])
    }

    /// `ibeacon_<uuid>_<major>_<minor>`, lowercase with `_` for the UUID's dashes: the beacon in the alphabet Home
    /// Assistant keeps in entity ids unchanged (it would turn `-` into `_` itself).
    /// Other kinds: `altbeacon_<id1>_<id2>_<id3>`, `eddystone_<namespace>_<instance>`, `device_<key fingerprint>`.
    public static func objectID(_ identity: BeaconIdentity) -> String {
        let uuid = identity.uuid.uuidString.lowercased().replacingOccurrences(of: "-", with: "_")
        switch identity.kind {
        case .iBeacon: return "ibeacon_\(uuid)_\(identity.major)_\(identity.minor)"
        case .altBeacon: return "altbeacon_\(uuid)_\(identity.major)_\(identity.minor)"
        case .eddystone: return "eddystone_\(identity.eddystoneNamespace)_\(identity.eddystoneInstance)"
        case .privateDevice: return "device_\(HexBytes.lowercase(identity.uuid.byteArray))"
        }
    }

    /// The device's name in Home Assistant.
    static func displayName(_ identity: BeaconIdentity) -> String {
        switch identity.kind {
        case .iBeacon: return "iBeacon \(identity.uuid.uuidString) \(identity.major):\(identity.minor)"
        case .altBeacon: return "AltBeacon \(identity.uuid.uuidString) \(identity.major):\(identity.minor)"
        case .eddystone: return "Eddystone \(identity.eddystoneNamespace) \(identity.eddystoneInstance)"
        case .privateDevice: return "Private device \(HexBytes.lowercase(identity.uuid.byteArray.prefix(4)))"
        }
    }

    /// The receiver's connectivity binary_sensor: on while its status is `online`.
    public var receiverConfig: (topic: String, payload: String) {
        let object = "beacond_\(room)_connectivity"
        return (
            "\(prefix)/binary_sensor/beacond/\(object)/config",
            Self.json([
                ("name", .text("Connectivity")), ("object_id", .text(object)), ("unique_id", .text(object)),
                ("state_topic", .text(ESPresense.statusTopic(room: room))), ("payload_on", .text(ESPresense.online)),
                ("payload_off", .text(ESPresense.offline)), ("device_class", .text("connectivity")),
                ("device", receiverDevice),
            ])
        )
    }

    /// A beacon's device_tracker (its room, `home` or `not_home` from the fleet's monitoring), its room sensor and its
    /// distance sensor.
    public func beaconConfigs(_ identity: BeaconIdentity) -> [(topic: String, payload: String)] {
        let object = "beacond_\(room)_\(Self.objectID(identity))"
        let device = Value.object([
            ("identifiers", .list([.text("beacond_\(Self.objectID(identity))")])),
            ("name", .text(Self.displayName(identity))),
            ("manufacturer", .text("beacond")), ("model", .text("iBeacon")),
            ("via_device", .text("beacond_\(room)")),
        ])
        let availability: [(String, Value)] = [
            ("availability_topic", .text(ESPresense.statusTopic(room: room))),
            ("payload_available", .text(ESPresense.online)), ("payload_not_available", .text(ESPresense.offline)),
        ]
        return [
            (
                "\(prefix)/device_tracker/beacond/\(object)/config",
                Self.json(
                    [
                        ("name", .text("Presence (\(room))")), ("object_id", .text(object)), ("unique_id", .text(object)),
                        ("state_topic", .text(presenceTopic(identity))), ("payload_home", .text("home")),
                        ("payload_not_home", .text("not_home")), ("payload_reset", .text("None")),
                        ("source_type", .text("bluetooth_le")), ("json_attributes_topic", .text(attributesTopic(identity))),
                        ("device", device),
                    ] + availability)
            ),
            (
                "\(prefix)/sensor/beacond/\(object)_distance/config",
                Self.json(
                    [
                        ("name", .text("Distance (\(room))")), ("object_id", .text("\(object)_distance")),
                        ("unique_id", .text("\(object)_distance")), ("state_topic", .text(distanceTopic(identity))),
                        ("unit_of_measurement", .text("m")), ("device_class", .text("distance")),
                        ("state_class", .text("measurement")), ("device", device),
                    ] + availability)
            ),
            (
                "\(prefix)/sensor/beacond/\(object)_room/config",
                Self.json(
                    [
                        ("name", .text("Room (\(room))")), ("object_id", .text("\(object)_room")),
                        ("unique_id", .text("\(object)_room")), ("state_topic", .text(roomTopic(identity))),
                        ("icon", .text("mdi:map-marker")), ("device", device),
                    ] + availability)
            ),
        ]
    }

    /// The payload of a presence state: what Home Assistant's device_tracker takes. Inside, a room name (any payload
    /// but `payload_home`/`payload_not_home`/`payload_reset` is the tracker's location name) or `home` when the room
    /// cannot be said.
    public static func presence(_ state: RegionState, room: String = "") -> String {
        switch state {
        case .inside: return room.isEmpty ? "home" : room
        case .outside: return "not_home"
        case .unknown: return "None"
        }
    }

    private var receiverDevice: Value {
        .object([
            ("identifiers", .list([.text("beacond_\(room)")])), ("name", .text("beacond \(room)")),
            ("manufacturer", .text("beacond")), ("model", .text("beacond receiver")), ("sw_version", .text(version)),
        ])
    }

    enum Value {
        case text(String)
        /// Written with at most two decimals.
        case number(Double)
        case list([Value])
        case object([(String, Value)])
    }

    static func json(_ members: [(String, Value)]) -> String { render(.object(members)) }

    private static func render(_ value: Value) -> String {
        switch value {
        case .text(let text): return JSONString.quoted(text)
        case .number(let number): return number.isFinite ? ESPresenseReading.twoDecimals(number) : "null"
        case .list(let items): return "[" + items.map(render).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { JSONString.quoted($0.0) + ":" + render($0.1) }.joined(separator: ",") + "}"
        }
    }
}
