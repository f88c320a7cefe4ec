public import Foundation

/// What identifies a beacon: for an iBeacon its proximity UUID, major and minor (Core Location's
/// `CLBeaconIdentityConstraint` fully specified); for the other kinds the same three fields as `BeaconKind` lays them
/// out. Never the Bluetooth address: a private device's identity is its key's fingerprint, so it stays one beacon
/// across address rotations.
public struct BeaconIdentity: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var kind: BeaconKind
    /// iBeacon: proximity UUID; AltBeacon: id1; Eddystone-UID: namespace (10 bytes) then instance (6 bytes); private
    /// device: its key's fingerprint.
    public var uuid: UUID
    /// iBeacon: major; AltBeacon: id2; other kinds: 0.
    public var major: UInt16
    /// iBeacon: minor; AltBeacon: id3; other kinds: 0.
    public var minor: UInt16

    /// An iBeacon's identity.
    @inlinable
    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.kind = .iBeacon
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    @inlinable
    public init(kind: BeaconKind, uuid: UUID, major: UInt16, minor: UInt16) {
        self.kind = kind
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// An Eddystone-UID beacon's identity: its namespace and instance.
    public static func eddystone(namespace: EddystoneNamespace, instance: EddystoneInstance) -> BeaconIdentity {
        BeaconIdentity(kind: .eddystone, uuid: namespace.uuid(instance: instance), major: 0, minor: 0)
    }

    /// A private device's identity: its key's fingerprint.
    public static func privateDevice(fingerprint: UUID) -> BeaconIdentity {
        BeaconIdentity(kind: .privateDevice, uuid: fingerprint, major: 0, minor: 0)
    }

    /// An Eddystone identity's namespace (the first 10 bytes).
    public var eddystoneNamespace: EddystoneNamespace { EddystoneNamespace(uuid) }
    /// An Eddystone identity's instance (the last 6 bytes).
    public var eddystoneInstance: EddystoneInstance { EddystoneInstance(uuid) }

    /// Kind, then byte order of the UUID, then major, then minor.
    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        if lhs.kind != rhs.kind { return lhs.kind < rhs.kind }
        let (l, r) = (lhs.uuid.orderedWords, rhs.uuid.orderedWords)
        if l != r { return l < r }
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        return lhs.minor < rhs.minor
    }

    // Identities are hashed on every sighting, several times (region index, ranging table);
    // Foundation's UUID hashes its bytes through a slow generic path, so hash machine words.
    @inlinable
    public static func == (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        lhs.major == rhs.major && lhs.minor == rhs.minor && lhs.kind == rhs.kind && lhs.uuid.words == rhs.uuid.words
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        let words = uuid.words
        hasher.combine(words.0)
        hasher.combine(words.1 ^ (UInt64(kind.rawValue) << 32 | UInt64(major) << 16 | UInt64(minor)))
    }

    /// The text form `--monitor` and `beaconctl` accept: `UUID:major:minor` for an iBeacon,
    /// `altbeacon:ID1:ID2:ID3`, `eddystone:NAMESPACE:INSTANCE` (hex), `device:FINGERPRINT` (a private device with no
    /// name known here).
    public var description: String {
        switch kind {
        case .iBeacon: "\(uuid.uuidString):\(major):\(minor)"
        case .altBeacon: "altbeacon:\(uuid.uuidString):\(major):\(minor)"
        case .eddystone: "eddystone:\(eddystoneNamespace):\(eddystoneInstance)"
        case .privateDevice: "device:\(uuid.uuidString)"
        }
    }
}

/// A beacon frame as carried in advertising data (an iBeacon's or AltBeacon's manufacturer data, an Eddystone-UID
/// frame), or what a resolved private address stands for: identity plus the measured power (calibrated RSSI at 1 m,
/// signed dBm; Eddystone's power at 0 m is converted, a phone's is assumed).
public struct BeaconFrame: Hashable, Sendable {
    public var identity: BeaconIdentity
    public var measuredPower: Int8

    @inlinable
    public init(identity: BeaconIdentity, measuredPower: Int8) {
        self.identity = identity
        self.measuredPower = measuredPower
    }
}

/// One sighting of a beacon of any kind: what the pipeline hands to ranging and monitoring.
public struct BeaconObservation: Hashable, Sendable {
    public var frame: BeaconFrame
    /// Received signal strength in dBm; `nil` when the controller reported 127 ("not available")
    /// or the source has none (over-the-air captures without a power header).
    public var rssi: Int8?
    public var address: BluetoothAddress
    public var addressType: UInt8
    public var timestamp: Timestamp
    /// Eddystone-TLM heard from the same address, attached to its Eddystone-UID sightings.
    public var telemetry: EddystoneTelemetry?

    @inlinable
    public init(
        frame: BeaconFrame, rssi: Int8?, address: BluetoothAddress, addressType: UInt8, timestamp: Timestamp,
        telemetry: EddystoneTelemetry? = nil
    ) {
        self.frame = frame
        self.rssi = rssi
        self.address = address
        self.addressType = addressType
        self.timestamp = timestamp
        self.telemetry = telemetry
    }

    @inlinable public var identity: BeaconIdentity { frame.identity }
}

extension UUID {
    /// The 16 bytes as two machine words, for hashing and equality in hot paths.
    @inlinable
    var words: (UInt64, UInt64) {
        // Sound: `uuid_t` is 16 trivially copyable bytes and (UInt64, UInt64) is 16 bytes with no
        // invalid bit patterns; the word values depend on byte order, which only hashing and
        // equality see (use `orderedWords` for ordering).
        unsafeBitCast(uuid, to: (UInt64, UInt64).self)
    }

    /// The bytes as two big-endian words: comparing them orders UUIDs as their text sorts.
    var orderedWords: (UInt64, UInt64) {
        let words = self.words
        return (UInt64(bigEndian: words.0), UInt64(bigEndian: words.1))
    }
}
