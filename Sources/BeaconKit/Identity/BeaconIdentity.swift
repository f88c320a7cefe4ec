public import Foundation

/// What identifies an iBeacon: proximity UUID, major, minor (Core Location's `CLBeaconIdentityConstraint`
/// fully specified). Never the Bluetooth address.
public struct BeaconIdentity: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16

    @inlinable
    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// Byte order of the UUID, then major, then minor.
    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        let (l, r) = (lhs.uuid.orderedWords, rhs.uuid.orderedWords)
        if l != r { return l < r }
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        return lhs.minor < rhs.minor
    }

    // Identities are hashed on every sighting, several times (region index, ranging table);
    // Foundation's UUID hashes its bytes through a slow generic path, so hash machine words.
    @inlinable
    public static func == (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        lhs.major == rhs.major && lhs.minor == rhs.minor && lhs.uuid.words == rhs.uuid.words
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        let words = uuid.words
        hasher.combine(words.0)
        hasher.combine(words.1 ^ (UInt64(major) << 16 | UInt64(minor)))
    }

    /// `UUID:major:minor`, the same shape `--monitor` and `beaconctl` accept.
    public var description: String { "\(uuid.uuidString):\(major):\(minor)" }
}

/// An iBeacon frame as carried in manufacturer-specific data: identity plus the measured power
/// (calibrated RSSI at 1 m, signed dBm).
public struct IBeaconFrame: Hashable, Sendable {
    public var identity: BeaconIdentity
    public var measuredPower: Int8

    @inlinable
    public init(identity: BeaconIdentity, measuredPower: Int8) {
        self.identity = identity
        self.measuredPower = measuredPower
    }
}

/// One sighting of an iBeacon: what the pipeline hands to ranging and monitoring.
public struct IBeaconObservation: Hashable, Sendable {
    public var frame: IBeaconFrame
    /// Received signal strength in dBm; `nil` when the controller reported 127 ("not available")
    /// or the source has none (over-the-air captures without a power header).
    public var rssi: Int8?
    public var address: BluetoothAddress
    public var addressType: UInt8
    public var timestamp: Timestamp

    @inlinable
    public init(frame: IBeaconFrame, rssi: Int8?, address: BluetoothAddress, addressType: UInt8, timestamp: Timestamp) {
        self.frame = frame
        self.rssi = rssi
        self.address = address
        self.addressType = addressType
        self.timestamp = timestamp
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
