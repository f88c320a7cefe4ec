/// Another receiver's measurement of a beacon (a fleet's rooms), for ranging a beacon this node's adapter did not hear
/// in a cycle: which receiver (by its room), its calibrated, smoothed distance, and the RSSI it reported.
public struct ReceiverMeasurement: Hashable, Sendable {
    /// The receiver's room, as topics name it.
    public var receiver: String
    /// Metres: the receiver's calibrated, smoothed distance from its fresh readings.
    public var distance: Double
    /// dBm as the receiver last reported it (before calibration); nil when it sent only a distance.
    public var rssi: Double?
    /// The RSSI at one metre used with it (the beacon's override, or what it advertised).
    public var measuredPower: Int?

    public init(receiver: String, distance: Double, rssi: Double? = nil, measuredPower: Int? = nil) {
        self.receiver = receiver
        self.distance = distance
        self.rssi = rssi
        self.measuredPower = measuredPower
    }
}
