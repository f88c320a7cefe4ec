public import Foundation
package import DBus
import BeacondAPI

/// `CLAuthorizationStatus`: the app's authorization as beacond decides it (an administrator answers requests).
public enum AuthorizationStatus: String, Sendable, Hashable, CaseIterable {
    case notDetermined, restricted, denied, authorizedWhenInUse, authorizedAlways

    /// Monitoring (regions) needs `authorizedAlways`; ranging needs either authorized status.
    public var allowsMonitoring: Bool { self == .authorizedAlways }
    public var allowsRanging: Bool { self == .authorizedAlways || self == .authorizedWhenInUse }
}

/// `CLRegionState`.
public enum RegionState: String, Sendable, Hashable {
    case unknown, inside, outside
}

/// `CLProximity`.
public enum Proximity: String, Sendable, Hashable {
    case unknown, immediate, near, far
}

/// Which kind of beacon a constraint, region or ranged beacon names (beacond's `Kind`, docs/devices.md). A
/// constraint made from a UUID names an iBeacon, as in Core Location.
public enum BeaconKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Apple's iBeacon: a proximity UUID, major and minor.
    case iBeacon = "iBeacon"
    /// AltBeacon: id1 (16 bytes, written as a UUID), id2 and id3.
    case altBeacon = "AltBeacon"
    /// Eddystone-UID: a 10-byte namespace and a 6-byte instance.
    case eddystone = "Eddystone"
    /// A phone (or any device) with a resolvable private address, known by its Identity Resolving Key, which an
    /// administrator (`devices.d/`) or the app's `[devices]` declares under a name.
    case privateDevice = "PrivateDevice"

    public var description: String { rawValue }
}

/// `CLBeaconIdentityConstraint` (and `CLMonitor.BeaconIdentityCondition`): which beacons. For an iBeacon (the
/// default, and Core Location's only kind) a UUID, optionally with major and minor; beacond's other kinds are made
/// with `.altBeacon(id1:…)`, `.eddystone(namespace:instance:)` and `.privateDevice(named:)`. A constraint names
/// one kind: ranging or monitoring it yields only beacons of that kind.
public struct BeaconIdentityConstraint: Hashable, Sendable, CustomStringConvertible {
    public let kind: BeaconKind
    /// The iBeacon's proximity UUID, or the AltBeacon's id1. Eddystone beacons and private devices have none: it is
    /// then the all-zero UUID, and `namespace`, `instance` or `device` name the beacon.
    public let uuid: UUID
    /// The iBeacon's major, or the AltBeacon's id2; nil for any.
    public let major: UInt16?
    /// The iBeacon's minor, or the AltBeacon's id3; nil for any (a minor needs a major).
    public let minor: UInt16?
    /// Eddystone: the namespace, 20 lowercase hex digits.
    public let namespace: String?
    /// Eddystone: the instance, 12 lowercase hex digits; nil for every instance of the namespace.
    public let instance: String?
    /// A private device: the name its Identity Resolving Key is declared under (the key never crosses the bus).
    public let device: String?

    public init(uuid: UUID) { self.init(.iBeacon, uuid, nil, nil) }
    public init(uuid: UUID, major: UInt16) { self.init(.iBeacon, uuid, major, nil) }
    public init(uuid: UUID, major: UInt16, minor: UInt16) { self.init(.iBeacon, uuid, major, minor) }

    /// From text, as programs get it (arguments, files): throws, saying what is wrong, for text that is not a UUID
    /// or a minor without a major.
    public init(uuidString: String, major: UInt16? = nil, minor: UInt16? = nil) throws(BeaconLocationError) {
        guard let uuid = UUID(uuidString: uuidString) else {
            throw Self.invalid("'\(uuidString)' is not a UUID: give it as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        guard minor == nil || major != nil else { throw Self.invalid("a minor needs a major (as in Core Location)") }
        self.init(.iBeacon, uuid, major, minor)
    }

    /// An AltBeacon by its id1 (any id2 and id3).
    public static func altBeacon(id1: UUID) -> Self { Self(.altBeacon, id1, nil, nil) }
    /// An AltBeacon by its id1 and id2 (any id3).
    public static func altBeacon(id1: UUID, id2: UInt16) -> Self { Self(.altBeacon, id1, id2, nil) }
    /// One AltBeacon.
    public static func altBeacon(id1: UUID, id2: UInt16, id3: UInt16) -> Self { Self(.altBeacon, id1, id2, id3) }

    /// Eddystone-UID beacons: every instance of `namespace` (20 hex digits, either case), or one `instance` (12 hex
    /// digits). Throws, saying the form, for anything else.
    public static func eddystone(namespace: String, instance: String? = nil) throws(BeaconLocationError) -> Self {
        guard let namespaceDigits = hexDigits(namespace, count: 20) else {
            throw invalid("an Eddystone namespace is 20 hex digits, e.g. edd1ebeac04e5defa017; got '\(namespace)'")
        }
        var instanceDigits: String?
        if let instance {
            guard let digits = hexDigits(instance, count: 12) else {
                throw invalid("an Eddystone instance is 12 hex digits, e.g. 0123456789ab; got '\(instance)'")
            }
            instanceDigits = digits
        }
        return Self(
            kind: .eddystone, uuid: zeroUUID, major: nil, minor: nil, namespace: namespaceDigits,
            instance: instanceDigits, device: nil)
    }

    /// A phone or other device with a resolvable private address, by the name its Identity Resolving Key is declared
    /// under: the app's `[devices]` or the administrator's `devices.d/` (docs/devices.md). beacond follows it across
    /// its address rotations. Throws for a name that cannot be one (1-64 of a-z, 0-9, `_` and `-`); beacond refuses
    /// a name nobody declared for the app.
    public static func privateDevice(named name: String) throws(BeaconLocationError) -> Self {
        guard isDeviceName(name) else {
            throw invalid(
                "a device name is 1-64 of a-z, 0-9, '_' and '-', as declared in [devices], e.g. alice-phone; got '\(name)'")
        }
        return Self(
            kind: .privateDevice, uuid: zeroUUID, major: nil, minor: nil, namespace: nil, instance: nil,
            device: name)
    }

    /// From the text `description` gives (and `beaconctl` takes): `UUID[:MAJOR[:MINOR]]` for an iBeacon,
    /// `altbeacon:ID1[:ID2[:ID3]]`, `eddystone:NAMESPACE[:INSTANCE]`, `device:NAME`. Throws, saying the forms.
    public init(parsing text: String) throws(BeaconLocationError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let forms = "give UUID[:MAJOR[:MINOR]], altbeacon:ID1[:ID2[:ID3]], eddystone:NAMESPACE[:INSTANCE] or device:NAME"
        switch parts.first?.lowercased() {
        case "altbeacon":
            let (uuid, major, minor) = try Self.uuidMajorMinor(Array(parts.dropFirst()), text: text, forms: forms)
            self.init(.altBeacon, uuid, major, minor)
        case "eddystone":
            guard (2...3).contains(parts.count) else { throw Self.invalid("'\(text)': \(forms)") }
            self = try .eddystone(namespace: parts[1], instance: parts.count == 3 ? parts[2] : nil)
        case "device":
            guard parts.count == 2 else { throw Self.invalid("'\(text)': \(forms)") }
            self = try .privateDevice(named: parts[1])
        default:
            let (uuid, major, minor) = try Self.uuidMajorMinor(parts, text: text, forms: forms)
            self.init(.iBeacon, uuid, major, minor)
        }
    }

    private init(_ kind: BeaconKind, _ uuid: UUID, _ major: UInt16?, _ minor: UInt16?) {
        self.init(kind: kind, uuid: uuid, major: major, minor: minor, namespace: nil, instance: nil, device: nil)
    }

    private init(
        kind: BeaconKind, uuid: UUID, major: UInt16?, minor: UInt16?, namespace: String?, instance: String?, device: String?
    ) {
        self.kind = kind
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.namespace = namespace
        self.instance = instance
        self.device = device
    }

    /// `UUID[:MAJOR[:MINOR]]` for an iBeacon, as beaconctl prints it; `altbeacon:…`, `eddystone:…`, `device:…` for
    /// the other kinds (`init(parsing:)` reads each back).
    public var description: String {
        switch kind {
        case .iBeacon, .altBeacon:
            let numbers = ([uuid.uuidString] + [major, minor].compactMap { $0.map(String.init) }).joined(separator: ":")
            return kind == .iBeacon ? numbers : "altbeacon:" + numbers
        case .eddystone: return (["eddystone", namespace ?? ""] + [instance].compactMap { $0 }).joined(separator: ":")
        case .privateDevice: return "device:" + (device ?? "")
        }
    }

    /// beacond's dictionary, as `StartRanging` takes it: `{UUID, Major?, Minor?}` for an iBeacon (no `Kind`, as
    /// before kinds), `Kind` and the kind's keys for the others.
    package var dictionary: VarDict {
        var entries: VarDict = [:]
        switch kind {
        case .iBeacon, .altBeacon:
            entries[BeacondKey.uuid] = .string(uuid.uuidString)
            if let major { entries[BeacondKey.major] = .uint16(major) }
            if let minor { entries[BeacondKey.minor] = .uint16(minor) }
        case .eddystone:
            entries[BeacondKey.namespace] = .string(namespace ?? "")
            if let instance { entries[BeacondKey.instance] = .string(instance) }
        case .privateDevice:
            entries[BeacondKey.device] = .string(device ?? "")
        }
        if kind != .iBeacon { entries[BeacondKey.kind] = .string(kind.rawValue) }
        return entries
    }

    /// From beacond's dictionaries (a region's, a constraint's, a beacon's); nil for one it cannot read (a kind this
    /// library does not know, or keys missing).
    package init?(dictionary: VarDict) {
        let kind: BeaconKind
        if let name = dictionary.string(BeacondKey.kind) {
            guard let known = BeaconKind(rawValue: name) else { return nil }
            kind = known
        } else {
            kind = .iBeacon
        }
        switch kind {
        case .iBeacon, .altBeacon:
            guard let text = dictionary.string(BeacondKey.uuid), let uuid = UUID(uuidString: text) else { return nil }
            let major = dictionary.integer(BeacondKey.major).flatMap(UInt16.init(exactly:))
            let minor = dictionary.integer(BeacondKey.minor).flatMap(UInt16.init(exactly:))
            self.init(kind, uuid, major, major == nil ? nil : minor)
        case .eddystone:
            guard let namespace = dictionary.string(BeacondKey.namespace),
                let constraint = try? Self.eddystone(namespace: namespace, instance: dictionary.string(BeacondKey.instance))
            else { return nil }
            self = constraint
        case .privateDevice:
            guard let name = dictionary.string(BeacondKey.device), let constraint = try? Self.privateDevice(named: name)
            else { return nil }
            self = constraint
        }
    }

    private static let zeroUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    private static func invalid(_ message: String) -> BeaconLocationError {
        BeaconLocationError(name: BeacondErrorName.invalidRegion.rawValue, message: message)
    }

    /// `text` lowercased when it is exactly `count` hex digits.
    private static func hexDigits(_ text: String, count: Int) -> String? {
        // ASCII only: Character.isHexDigit also takes fullwidth forms, which beacond refuses.
        guard text.utf8.count == count,
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return text.lowercased()
    }

    private static func isDeviceName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D }
    }

    private static func uuidMajorMinor(
        _ parts: [String], text: String, forms: String
    ) throws(BeaconLocationError) -> (UUID, UInt16?, UInt16?) {
        guard (1...3).contains(parts.count), let uuid = UUID(uuidString: parts[0]) else {
            throw invalid("'\(text)' names no beacon: \(forms) (a UUID is 8-4-4-4-12 hex digits)")
        }
        var numbers: [UInt16] = []
        for part in parts.dropFirst() {
            guard let number = UInt16(part) else {
                throw invalid("'\(part)' in '\(text)' is not a number 0...65535: \(forms)")
            }
            numbers.append(number)
        }
        return (uuid, numbers.first, numbers.count > 1 ? numbers[1] : nil)
    }
}

/// `CLMonitor.BeaconIdentityCondition`: the same thing, under the modern face's name.
public typealias BeaconIdentityCondition = BeaconIdentityConstraint

/// `CLBeaconRegion`: a constraint with the app's identifier for it. The same identifier again replaces a region.
public struct BeaconRegion: Hashable, Sendable, CustomStringConvertible {
    public let identifier: String
    public let beaconIdentityConstraint: BeaconIdentityConstraint
    public var notifyOnEntry = true
    public var notifyOnExit = true
    /// beacond's own (with `[mqtt]` receivers): inside only while the beacon is in this room.
    public var room: String?
    /// beacond's own: seconds the beacon must be heard, unbroken, before the region is entered.
    public var entryDelay: Double?
    /// beacond's own: seconds of silence that exit this region (instead of the daemon's exit timeout).
    public var exitDelay: Double?

    public init(uuid: UUID, identifier: String) {
        self.init(beaconIdentityConstraint: BeaconIdentityConstraint(uuid: uuid), identifier: identifier)
    }

    public init(uuid: UUID, major: UInt16, identifier: String) {
        self.init(beaconIdentityConstraint: BeaconIdentityConstraint(uuid: uuid, major: major), identifier: identifier)
    }

    public init(uuid: UUID, major: UInt16, minor: UInt16, identifier: String) {
        self.init(
            beaconIdentityConstraint: BeaconIdentityConstraint(uuid: uuid, major: major, minor: minor),
            identifier: identifier)
    }

    public init(beaconIdentityConstraint: BeaconIdentityConstraint, identifier: String) {
        self.beaconIdentityConstraint = beaconIdentityConstraint
        self.identifier = identifier
    }

    public var kind: BeaconKind { beaconIdentityConstraint.kind }
    public var uuid: UUID { beaconIdentityConstraint.uuid }
    public var major: UInt16? { beaconIdentityConstraint.major }
    public var minor: UInt16? { beaconIdentityConstraint.minor }

    public var description: String { "\(identifier) (\(beaconIdentityConstraint))" }

    /// `{Identifier, UUID, Major?, Minor?, …}`, as `StartMonitoring` takes it (what is left out is beacond's
    /// default: notifications on, no room, no delays).
    package var dictionary: VarDict {
        var entries = beaconIdentityConstraint.dictionary
        entries[BeacondKey.identifier] = .string(identifier)
        if !notifyOnEntry { entries[BeacondKey.notifyOnEntry] = .boolean(false) }
        if !notifyOnExit { entries[BeacondKey.notifyOnExit] = .boolean(false) }
        if let room { entries[BeacondKey.room] = .string(room) }
        if let entryDelay { entries[BeacondKey.entryDelay] = .double(entryDelay) }
        if let exitDelay { entries[BeacondKey.exitDelay] = .double(exitDelay) }
        return entries
    }

    package init?(dictionary: VarDict) {
        guard let constraint = BeaconIdentityConstraint(dictionary: dictionary),
            let identifier = dictionary.string(BeacondKey.identifier)
        else { return nil }
        self.init(beaconIdentityConstraint: constraint, identifier: identifier)
        notifyOnEntry = dictionary.bool(BeacondKey.notifyOnEntry) ?? true
        notifyOnExit = dictionary.bool(BeacondKey.notifyOnExit) ?? true
        room = dictionary.string(BeacondKey.room).flatMap { $0.isEmpty ? nil : $0 }
        entryDelay = dictionary.double(BeacondKey.entryDelay)
        exitDelay = dictionary.double(BeacondKey.exitDelay)
    }

    /// What can be checked before beacond sees it (beacond checks the rest, and says what is wrong).
    func validate() throws(BeaconLocationError) {
        guard (1...256).contains(identifier.utf8.count) else {
            throw BeaconLocationError(
                name: BeacondErrorName.invalidRegion.rawValue,
                message: "a region needs an identifier of 1...256 bytes (the app's name for it), e.g. "
                    + "BeaconRegion(uuid: …, identifier: \"door\"); got \(identifier.utf8.count) bytes")
        }
        if let control = identifier.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw BeaconLocationError(
                name: BeacondErrorName.invalidRegion.rawValue,
                message: "a region identifier is printable text: it has the control character U+"
                    + String(control.value, radix: 16, uppercase: true))
        }
    }
}

/// `CLBeacon`: one beacon of a ranging cycle, of the kind its constraint names.
public struct Beacon: Hashable, Sendable {
    /// This beacon exactly, as a constraint (to range or monitor it alone).
    public let identityConstraint: BeaconIdentityConstraint
    public var kind: BeaconKind { identityConstraint.kind }
    /// The iBeacon's proximity UUID or the AltBeacon's id1; the all-zero UUID for the other kinds.
    public var uuid: UUID { identityConstraint.uuid }
    /// The iBeacon's major or the AltBeacon's id2; 0 for the other kinds.
    public var major: UInt16 { identityConstraint.major ?? 0 }
    /// The iBeacon's minor or the AltBeacon's id3; 0 for the other kinds.
    public var minor: UInt16 { identityConstraint.minor ?? 0 }
    /// Eddystone: the namespace (20) and the instance (12 lowercase hex digits).
    public var namespace: String? { identityConstraint.namespace }
    public var instance: String? { identityConstraint.instance }
    /// A private device: the name of the constraint it was ranged for (the phone's own address rotates).
    public var device: String? { identityConstraint.device }
    /// Eddystone with TLM frames from the same address: the latest battery voltage (mV) and temperature (°C).
    public let batteryMillivolts: Int?
    public let temperature: Double?
    public let proximity: Proximity
    /// Metres, estimated from the smoothed RSSI; negative when it cannot be said (Core Location's -1).
    public let accuracy: Double
    /// dBm, smoothed; 0 when not heard this cycle (as Core Location reports it).
    public let rssi: Int
    public let timestamp: Date
    /// With `[mqtt]` receivers: the room beacond places the beacon in ("" when it cannot say).
    public let room: String?
    /// With `[mqtt]` receivers and a floor plan: where beacond places the beacon on it; nil without.
    public let position: BeaconPosition?

    package init?(dictionary: VarDict) {
        guard let constraint = BeaconIdentityConstraint(dictionary: dictionary) else { return nil }
        // A beacon is one beacon: all its numbers (an Eddystone its instance) are there.
        switch constraint.kind {
        case .iBeacon, .altBeacon: guard constraint.major != nil, constraint.minor != nil else { return nil }
        case .eddystone: guard constraint.instance != nil else { return nil }
        case .privateDevice: break
        }
        identityConstraint = constraint
        batteryMillivolts = dictionary.integer(BeacondKey.batteryMillivolts).map(Int.init)
        temperature = dictionary.double(BeacondKey.temperature)
        proximity = dictionary.string(BeacondKey.proximity).flatMap(Proximity.init(rawValue:)) ?? .unknown
        accuracy = dictionary.double(BeacondKey.accuracy) ?? -1
        let rssi = dictionary.double(BeacondKey.rssi) ?? 0
        self.rssi = rssi.isFinite ? Int(rssi.rounded().clamped(to: -128...127)) : 0
        timestamp = RegionEventInfo.date(dictionary.integer(BeacondKey.timestamp))
        room = dictionary.string(BeacondKey.room)
        position = dictionary.dictionary(BeacondKey.position).flatMap(BeaconPosition.init(dictionary:))
    }
}

/// Where beacond places a ranged beacon on its floor plan (`floorplan.toml`, docs/position.md).
public struct BeaconPosition: Hashable, Sendable {
    /// Metres on the plan.
    public let x: Double
    public let y: Double
    public let z: Double
    /// The floor's id in the plan.
    public let floor: String
    /// Metres: the true position is within this of (x, y) about two times in three.
    public let accuracy: Double
    /// How many receivers' readings placed it.
    public let fixes: Int

    package init?(dictionary: VarDict) {
        guard let x = dictionary.double(BeacondPositionKey.x), let y = dictionary.double(BeacondPositionKey.y) else { return nil }
        self.x = x
        self.y = y
        z = dictionary.double(BeacondPositionKey.z) ?? 0
        floor = dictionary.string(BeacondPositionKey.floor) ?? ""
        accuracy = dictionary.double(BeacondPositionKey.accuracy) ?? -1
        fixes = Int(dictionary.integer(BeacondPositionKey.fixes) ?? 0)
    }
}

/// When a region event happened, and whether beacond held it for the app while the app had no client.
public struct RegionEventInfo: Hashable, Sendable {
    public let timestamp: Date
    /// Queued while the app had no client, delivered when it came back (its time is when it happened).
    public let late: Bool
    /// Events of the app beacond dropped before this one (its queue for the app was full).
    public let droppedBefore: Int

    package init(dictionary: VarDict?) {
        timestamp = Self.date(dictionary?.integer(BeacondEventInfoKey.timestamp))
        late = dictionary?.bool(BeacondEventInfoKey.late) ?? false
        droppedBefore = Int(dictionary?.integer(BeacondEventInfoKey.droppedBefore) ?? 0)
    }

    static func date(_ microseconds: Int64?) -> Date {
        guard let microseconds, microseconds > 0 else { return Date() }
        return Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
