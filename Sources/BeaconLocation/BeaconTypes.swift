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

/// `CLBeaconIdentityConstraint` (and `CLMonitor.BeaconIdentityCondition`): a UUID, optionally with major and minor.
public struct BeaconIdentityConstraint: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID
    public let major: UInt16?
    public let minor: UInt16?

    public init(uuid: UUID) { self.init(uuid, nil, nil) }
    public init(uuid: UUID, major: UInt16) { self.init(uuid, major, nil) }
    public init(uuid: UUID, major: UInt16, minor: UInt16) { self.init(uuid, major, minor) }

    /// From text, as programs get it (arguments, files): throws, saying what is wrong, for text that is not a UUID
    /// or a minor without a major.
    public init(uuidString: String, major: UInt16? = nil, minor: UInt16? = nil) throws(BeaconLocationError) {
        guard let uuid = UUID(uuidString: uuidString) else {
            throw BeaconLocationError(
                name: BeacondErrorName.invalidRegion.rawValue,
                message: "'\(uuidString)' is not a UUID: give it as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        guard minor == nil || major != nil else {
            throw BeaconLocationError(
                name: BeacondErrorName.invalidRegion.rawValue, message: "a minor needs a major (as in Core Location)")
        }
        self.init(uuid, major, minor)
    }

    private init(_ uuid: UUID, _ major: UInt16?, _ minor: UInt16?) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// `UUID[:MAJOR[:MINOR]]`, as beaconctl prints it.
    public var description: String {
        ([uuid.uuidString] + [major, minor].compactMap { $0.map(String.init) }).joined(separator: ":")
    }

    /// `{UUID, Major?, Minor?}`, as `StartRanging` takes it.
    package var dictionary: VarDict {
        var entries: VarDict = [BeacondKey.uuid: .string(uuid.uuidString)]
        if let major { entries[BeacondKey.major] = .uint16(major) }
        if let minor { entries[BeacondKey.minor] = .uint16(minor) }
        return entries
    }

    /// From beacond's dictionaries (a region's, a constraint's, a beacon's).
    package init?(dictionary: VarDict) {
        guard let text = dictionary.string(BeacondKey.uuid), let uuid = UUID(uuidString: text) else { return nil }
        let major = dictionary.integer(BeacondKey.major).flatMap(UInt16.init(exactly:))
        let minor = dictionary.integer(BeacondKey.minor).flatMap(UInt16.init(exactly:))
        self.init(uuid, major, major == nil ? nil : minor)
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

/// `CLBeacon`: one beacon of a ranging cycle.
public struct Beacon: Hashable, Sendable {
    public let uuid: UUID
    public let major: UInt16
    public let minor: UInt16
    public let proximity: Proximity
    /// Metres, estimated from the smoothed RSSI; negative when it cannot be said (Core Location's -1).
    public let accuracy: Double
    /// dBm, smoothed; 0 when not heard this cycle (as Core Location reports it).
    public let rssi: Int
    public let timestamp: Date
    /// With `[mqtt]` receivers: the room beacond places the beacon in ("" when it cannot say).
    public let room: String?

    package init?(dictionary: VarDict) {
        guard let constraint = BeaconIdentityConstraint(dictionary: dictionary), let major = constraint.major,
            let minor = constraint.minor
        else { return nil }
        uuid = constraint.uuid
        self.major = major
        self.minor = minor
        proximity = dictionary.string(BeacondKey.proximity).flatMap(Proximity.init(rawValue:)) ?? .unknown
        accuracy = dictionary.double(BeacondKey.accuracy) ?? -1
        let rssi = dictionary.double(BeacondKey.rssi) ?? 0
        self.rssi = rssi.isFinite ? Int(rssi.rounded().clamped(to: -128...127)) : 0
        timestamp = RegionEventInfo.date(dictionary.integer(BeacondKey.timestamp))
        room = dictionary.string(BeacondKey.room)
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
