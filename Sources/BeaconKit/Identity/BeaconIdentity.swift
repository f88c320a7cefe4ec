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

    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        if lhs.uuid != rhs.uuid { return lhs.uuid.uuidString < rhs.uuid.uuidString }
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        return lhs.minor < rhs.minor
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
