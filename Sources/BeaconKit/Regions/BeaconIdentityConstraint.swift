public import Foundation

/// Which beacons a ranging request or a region covers (Core Location's `CLBeaconIdentityConstraint`), for each kind:
/// - iBeacon: a UUID, a UUID and major, or a UUID, major and minor.
/// - AltBeacon: id1, id1 and id2, or id1, id2 and id3 (held as `uuid`, `major`, `minor`).
/// - Eddystone-UID: a namespace, or a namespace and instance (held in `uuid`; `major` and `minor` are 0 when the
///   instance is given, nil when not).
/// - A private device: its key's fingerprint (`major` and `minor` 0), and the name its owner declared it under.
public struct BeaconIdentityConstraint: Hashable, Sendable, CustomStringConvertible {
    public let kind: BeaconKind
    public let uuid: UUID
    public let major: UInt16?
    public let minor: UInt16?
    /// A private device's name, as the app or administrator declared its key (`[devices]`); what clients see.
    public let deviceName: String?

    /// An iBeacon constraint. A minor without a major is meaningless (Core Location has no such constraint), so it
    /// cannot be built.
    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) throws(BeaconIdentityConstraint.Invalid) {
        try self.init(kind: .iBeacon, uuid: uuid, major: major, minor: minor)
    }

    /// An iBeacon or AltBeacon constraint (for AltBeacon: id1, id2, id3).
    public init(kind: BeaconKind, uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) throws(BeaconIdentityConstraint.Invalid) {
        if minor != nil && major == nil { throw .minorWithoutMajor }
        guard kind == .iBeacon || kind == .altBeacon else { throw .malformed("\(kind.name) has no UUID, major and minor") }
        self.kind = kind
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.deviceName = nil
    }

    /// Every iBeacon with this proximity UUID (cannot be invalid, so it does not throw).
    public static func matching(uuid: UUID) -> BeaconIdentityConstraint {
        BeaconIdentityConstraint(checked: .iBeacon, uuid: uuid, major: nil, minor: nil)
    }

    /// Every iBeacon with this proximity UUID and major (cannot be invalid, so it does not throw).
    public static func matching(uuid: UUID, major: UInt16) -> BeaconIdentityConstraint {
        BeaconIdentityConstraint(checked: .iBeacon, uuid: uuid, major: major, minor: nil)
    }

    /// Every Eddystone-UID beacon in `namespace`, or the one `instance` in it.
    public static func eddystone(namespace: EddystoneNamespace, instance: EddystoneInstance? = nil) -> BeaconIdentityConstraint {
        BeaconIdentityConstraint(
            checked: .eddystone, uuid: namespace.uuid(instance: instance), major: instance == nil ? nil : 0,
            minor: instance == nil ? nil : 0)
    }

    /// The private device whose key has this fingerprint, under the name it was declared with.
    public static func privateDevice(fingerprint: UUID, name: String? = nil) -> BeaconIdentityConstraint {
        BeaconIdentityConstraint(checked: .privateDevice, uuid: fingerprint, major: 0, minor: 0, deviceName: name)
    }

    /// A private device named by a client, before the daemon looks its key up (`resolvingDevice`): its fingerprint
    /// is all zeros, which no key has, so an unresolved constraint matches nothing.
    public static func privateDevice(named name: String) -> BeaconIdentityConstraint {
        BeaconIdentityConstraint(
            checked: .privateDevice, uuid: UUID(byteArray: [UInt8](repeating: 0, count: 16)), major: 0, minor: 0, deviceName: name)
    }

    /// This private-device constraint with its key's fingerprint.
    public func resolvingDevice(fingerprint: UUID) -> BeaconIdentityConstraint {
        .privateDevice(fingerprint: fingerprint, name: deviceName)
    }

    private init(checked kind: BeaconKind, uuid: UUID, major: UInt16?, minor: UInt16?, deviceName: String? = nil) {
        self.kind = kind
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.deviceName = deviceName
    }

    /// The constraint that matches exactly one beacon.
    public init(_ identity: BeaconIdentity) {
        self.kind = identity.kind
        self.uuid = identity.uuid
        self.major = identity.major
        self.minor = identity.minor
        self.deviceName = nil
    }

    /// An Eddystone constraint's namespace.
    public var eddystoneNamespace: EddystoneNamespace? { kind == .eddystone ? EddystoneNamespace(uuid) : nil }
    /// An Eddystone constraint's instance, nil for a namespace-only one.
    public var eddystoneInstance: EddystoneInstance? { kind == .eddystone && major != nil ? EddystoneInstance(uuid) : nil }

    /// The text forms the CLI takes: `UUID[:MAJOR[:MINOR]]` (an iBeacon; `ibeacon:` may prefix it),
    /// `altbeacon:ID1[:ID2[:ID3]]`, `eddystone:NAMESPACE[:INSTANCE]` (20 and 12 hex digits) and `device:NAME` (a
    /// private device by the name its key was declared under; unresolved until the key is looked up).
    public init(parsing text: String) throws(BeaconIdentityConstraint.Invalid) {
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var kind = BeaconKind.iBeacon
        if let first = parts.first, UUID(uuidString: first) == nil,
            let named = BeaconKind.allCases.first(where: { $0.textPrefix == first.lowercased() })
        {
            kind = named
            parts.removeFirst()
        }
        switch kind {
        case .iBeacon, .altBeacon:
            guard (1...3).contains(parts.count), let uuid = UUID(uuidString: parts[0]) else { throw .malformed(text) }
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
            try self.init(kind: kind, uuid: uuid, major: major, minor: minor)
        case .eddystone:
            guard (1...2).contains(parts.count), let namespace = EddystoneNamespace(hex: parts[0]) else {
                throw .malformedEddystone(text)
            }
            var instance: EddystoneInstance?
            if parts.count == 2 {
                guard let value = EddystoneInstance(hex: parts[1]) else { throw .malformedEddystone(text) }
                instance = value
            }
            self = .eddystone(namespace: namespace, instance: instance)
        case .privateDevice:
            guard parts.count == 1, Self.isDeviceName(parts[0]) else { throw .malformedDevice(text) }
            self = .privateDevice(named: parts[0])
        }
    }

    /// Whether this names one beacon, not a group: all its numbers (an Eddystone its instance; a private device is
    /// always one).
    public var namesOneBeacon: Bool {
        switch kind {
        case .iBeacon, .altBeacon, .eddystone: major != nil && minor != nil
        case .privateDevice: true
        }
    }

    /// A private device's name: 1-64 of a-z, 0-9, '_' and '-' (the same rule as a room's), and no 8 hex digits in a
    /// row: a name is shown in logs, status and to apps, and a name that could be (part of) a key must never be.
    public static func isDeviceName(_ name: String) -> Bool { RegionSpec.isRoom(name) && !looksLikeKey(name) }

    /// 8 or more hex digits in a row (`-` and `_` between them count as nothing).
    public static func looksLikeKey(_ name: String) -> Bool {
        var run = 0
        for scalar in name.unicodeScalars {
            if scalar == "-" || scalar == "_" { continue }
            run = ("0"..."9").contains(scalar) || ("a"..."f").contains(scalar) ? run + 1 : 0
            if run >= 8 { return true }
        }
        return false
    }

    @inlinable
    public func matches(_ identity: BeaconIdentity) -> Bool {
        guard identity.kind == kind else { return false }
        if kind == .eddystone && major == nil {
            return identity.uuid.eddystoneNamespaceWords == uuid.eddystoneNamespaceWords
        }
        return identity.uuid == uuid
            && (major == nil || major == identity.major)
            && (minor == nil || minor == identity.minor)
    }

    public var description: String {
        switch kind {
        case .iBeacon, .altBeacon:
            var text = (kind == .altBeacon ? "altbeacon:" : "") + uuid.uuidString
            if let major { text += ":\(major)" }
            if let minor { text += ":\(minor)" }
            return text
        case .eddystone:
            return "eddystone:\(EddystoneNamespace(uuid))" + (eddystoneInstance.map { ":\($0)" } ?? "")
        case .privateDevice:
            return "device:" + (deviceName ?? uuid.uuidString)
        }
    }

    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case minorWithoutMajor
        case malformed(String)
        case malformedEddystone(String)
        case malformedDevice(String)

        public var description: String {
            switch self {
            case .minorWithoutMajor:
                return "a minor needs a major: give UUID:MAJOR:MINOR"
            case .malformed(let text):
                return "'\(text)' is not UUID[:MAJOR[:MINOR]] (an iBeacon: UUID like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, "
                    + "MAJOR and MINOR 0-65535), altbeacon:ID1[:ID2[:ID3]] (the same shape) or eddystone:NAMESPACE[:INSTANCE]"
            case .malformedEddystone(let text):
                return "'\(text)' is not eddystone:NAMESPACE[:INSTANCE]: the namespace is 20 hex digits and the instance 12, "
                    + "e.g. eddystone:edd1ebeac04e5defa017:0123456789ab"
            case .malformedDevice(let text):
                return "'\(text)' is not device:NAME: a device's name is 1-64 of a-z, 0-9, '_' and '-', as its key was "
                    + "declared under in [devices] (docs/devices.md), e.g. device:alice-phone"
            }
        }
    }
}

extension UUID {
    /// The first 10 bytes (an Eddystone namespace) as two words, the rest zero: for matching and hashing.
    @inlinable
    var eddystoneNamespaceWords: (UInt64, UInt64) {
        let bytes = uuid
        let masked = UUID(
            uuid: (bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5, bytes.6, bytes.7, bytes.8, bytes.9, 0, 0, 0, 0, 0, 0))
        return masked.words
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
