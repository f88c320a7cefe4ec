public import Foundation

/// Which beacons a ranging request or a region covers (Core Location's `CLBeaconIdentityConstraint`):
/// a UUID, a UUID and major, or a UUID, major and minor.
public struct BeaconIdentityConstraint: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID
    public let major: UInt16?
    public let minor: UInt16?

    /// A minor without a major is meaningless (Core Location has no such constraint), so it cannot be built.
    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) throws(BeaconIdentityConstraint.Invalid) {
        if minor != nil && major == nil { throw .minorWithoutMajor }
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// Every beacon with this proximity UUID (cannot be invalid, so it does not throw).
    public static func matching(uuid: UUID) -> BeaconIdentityConstraint {
        BeaconIdentityConstraint(checked: uuid, major: nil, minor: nil)
    }

    /// Every beacon with this proximity UUID and major (cannot be invalid, so it does not throw).
    public static func matching(uuid: UUID, major: UInt16) -> BeaconIdentityConstraint {
        BeaconIdentityConstraint(checked: uuid, major: major, minor: nil)
    }

    private init(checked uuid: UUID, major: UInt16?, minor: UInt16?) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// The constraint that matches exactly one beacon.
    public init(_ identity: BeaconIdentity) {
        self.uuid = identity.uuid
        self.major = identity.major
        self.minor = identity.minor
    }

    /// Parses `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR` (decimal major/minor), the form the CLI takes.
    public init(parsing text: String) throws(BeaconIdentityConstraint.Invalid) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let uuid = UUID(uuidString: String(parts[0])) else {
            throw .malformed(text)
        }
        var major: UInt16?
        var minor: UInt16?
        if parts.count >= 2 {
            guard let value = UInt16(parts[1]) else { throw .malformed(text) }
            major = value
        }
        if parts.count == 3 {
            guard let value = UInt16(parts[2]) else { throw .malformed(text) }
            minor = value
        }
        try self.init(uuid: uuid, major: major, minor: minor)
    }

    @inlinable
    public func matches(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid
            && (major == nil || major == identity.major)
            && (minor == nil || minor == identity.minor)
    }

    public var description: String {
        var text = uuid.uuidString
        if let major { text += ":\(major)" }
        if let minor { text += ":\(minor)" }
        return text
    }

    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case minorWithoutMajor
        case malformed(String)

        public var description: String {
            switch self {
            case .minorWithoutMajor:
                return "a minor needs a major: give UUID:MAJOR:MINOR"
            case .malformed(let text):
                return "'\(text)' is not UUID[:MAJOR[:MINOR]] (UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, MAJOR and MINOR 0-65535)"
            }
        }
    }
}

/// A monitored beacon region (Core Location's `CLBeaconRegion`): an identifier chosen by the client,
/// a constraint, and whether the client wants entry and exit notifications.
public struct BeaconRegion: Hashable, Sendable, CustomStringConvertible {
    public var identifier: String
    public var constraint: BeaconIdentityConstraint
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    /// This region's RSSI thresholds (beacond's extension: no peer has them); nil uses the monitor's
    /// configuration (`MonitoringConfiguration.hysteresis`, the daemon's `[monitoring]` default). Part of the
    /// region's identity: the same identifier with other thresholds is another region.
    public var hysteresis: RSSIHysteresis?
    /// Only while its beacon is in this room (`RoomLocator`) is the region inside; nil: in any room.
    public var room: String?
    /// How long a beacon must be heard, without a silence long enough to exit, before the region is entered; nil
    /// or zero enters at the first sighting.
    public var entryDelay: Duration?
    /// This region's exit timeout, instead of the monitor's (fixed or adaptive); nil uses the monitor's.
    public var exitDelay: Duration?

    public init(
        identifier: String, constraint: BeaconIdentityConstraint, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        hysteresis: RSSIHysteresis? = nil, room: String? = nil, entryDelay: Duration? = nil, exitDelay: Duration? = nil
    ) {
        self.identifier = identifier
        self.constraint = constraint
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.hysteresis = hysteresis
        self.room = room
        self.entryDelay = entryDelay
        self.exitDelay = exitDelay
    }

    public var description: String { "\(identifier) (\(constraint)\(room.map { "@" + $0 } ?? ""))" }
}

/// Core Location's `CLRegionState`.
public enum RegionState: String, Sendable, Hashable, CaseIterable {
    case unknown
    case inside
    case outside
}
