/// One beacon in a ranging result (Core Location's `CLBeacon`).
public struct RangedBeacon: Hashable, Sendable, CustomStringConvertible {
    public var identity: BeaconIdentity
    /// Smoothed RSSI in dBm, rounded; 0 when the beacon was not heard since the previous ranging
    /// cycle (as `CLBeacon.rssi`).
    public var rssi: Int
    /// Estimated distance in metres; −1 when unknown, including when not heard this cycle
    /// (as `CLBeacon.accuracy`).
    public var accuracy: Double
    /// `unknown` when not heard this cycle or the accuracy is unknown.
    public var proximity: BeaconProximity
    /// The beacon's calibrated RSSI at 1 m, from its latest advertisement.
    public var measuredPower: Int8
    /// When the beacon was last heard, by this adapter or (with rooms) any receiver (as `CLBeacon.timestamp`).
    public var timestamp: Timestamp
    /// With rooms: the receiver (by its room) whose reading gave `rssi` and `accuracy`: this node's own room when its
    /// adapter heard the beacon this cycle, else the nearest receiver that did. nil without rooms, or when nobody
    /// heard it this cycle.
    public var receiver: String?
    /// An Eddystone beacon's latest telemetry (battery, temperature), when its address also sends TLM frames.
    public var telemetry: EddystoneTelemetry?

    public init(
        identity: BeaconIdentity, rssi: Int, accuracy: Double, proximity: BeaconProximity,
        measuredPower: Int8, timestamp: Timestamp, receiver: String? = nil
    ) {
        self.identity = identity
        self.rssi = rssi
        self.accuracy = accuracy
        self.proximity = proximity
        self.measuredPower = measuredPower
        self.timestamp = timestamp
        self.receiver = receiver
    }

    public var description: String {
        "\(identity) rssi=\(rssi) accuracy=\(accuracy) \(proximity.rawValue)" + (receiver.map { " receiver=\($0)" } ?? "")
    }
}

/// What one ranging request sees in one cycle (the arguments of Core Location's
/// `locationManager(_:didRange:satisfying:)`): the request's key and constraint, and the matching
/// beacons, nearest first. An empty list is a result too: nothing matching is in range.
public struct RangingResult<Key: Hashable & Sendable>: Hashable, Sendable {
    public var key: Key
    public var constraint: BeaconIdentityConstraint
    public var beacons: [RangedBeacon]

    public init(key: Key, constraint: BeaconIdentityConstraint, beacons: [RangedBeacon]) {
        self.key = key
        self.constraint = constraint
        self.beacons = beacons
    }
}
