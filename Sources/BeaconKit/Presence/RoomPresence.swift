/// Rooms as the daemon and replay see them: this receiver's room, every receiver's calibration, beacons' measured
/// power overrides, and the `RoomLocator` that places each beacon. Pure; time is passed in.
public struct RoomPresence: Sendable {
    /// The room of this node's own scanner.
    public var localRoom: String
    /// dB added to this node's own readings (`[mqtt] rssi_offset`), as it adds it to what it publishes: every
    /// receiver's RSSI here is what that receiver reports.
    public var localRSSIOffset: Double
    /// By receiver (its room, as topics name it); absent: `ReceiverCalibration.uncalibrated`.
    public var calibrations: [String: ReceiverCalibration]
    /// A beacon's RSSI at one metre when its advertised measured power is wrong, dBm.
    public var measuredPower: [BeaconIdentity: Int]
    public private(set) var locator: RoomLocator<BeaconIdentity>
    /// Each receiver's latest RSSI of each beacon, raw (before calibration), for `beaconctl calibrate`.
    public private(set) var latestReadings: [BeaconIdentity: [String: ReceiverReading]] = [:]

    /// What one receiver last heard of one beacon.
    public struct ReceiverReading: Hashable, Sendable {
        public var rssi: Double
        /// The measured power used (the override, or what the beacon advertised).
        public var measuredPower: Int
        public var time: Timestamp
    }

    public init(
        localRoom: String, localRSSIOffset: Double = 0, calibrations: [String: ReceiverCalibration] = [:],
        measuredPower: [BeaconIdentity: Int] = [:], configuration: RoomConfiguration = .default
    ) {
        self.localRoom = localRoom
        self.localRSSIOffset = localRSSIOffset
        self.calibrations = calibrations
        self.measuredPower = measuredPower
        locator = RoomLocator(configuration: configuration)
    }

    /// Counts a reading of `identity` by `receiver` in `room`: `rssi` dBm (smoothed or raw) with the beacon's advertised
    /// `advertisedPower`; without an RSSI, the receiver's own `distance` estimate. Returns where the beacon is now.
    public mutating func place(
        _ identity: BeaconIdentity, rssi: Double?, advertisedPower: Int?, distance: Double? = nil,
        by receiver: ReceiverID, in room: String, at now: Timestamp
    ) -> SightingRoom {
        let power = measuredPower[identity] ?? advertisedPower
        var metres = distance
        let rssi = receiver == .local ? rssi.map { $0 + localRSSIOffset } : rssi
        if let rssi, let power, rssi.isFinite {
            metres = (calibrations[room] ?? .uncalibrated).distance(rssi: rssi, measuredPower: Double(power)) ?? metres
            // Full: readings of new beacons are not kept (`forget` makes room once a minute); never a pass over the
            // table per reading.
            if latestReadings[identity] != nil || latestReadings.count < Self.readingCapacity {
                latestReadings[identity, default: [:]][room] = ReceiverReading(rssi: rssi, measuredPower: power, time: now)
            }
        }
        // Heard but unmeasurable (no RSSI, or a beacon advertising measured power 0): it is near this receiver, how near
        // cannot be said. Placed as far, so it names a room no other receiver hears it in, and never beats a measurement.
        let usable = metres.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? Self.unmeasuredDistance
        locator.observe(identity, distance: usable, by: receiver, in: room, at: now)
        return placement(of: identity)
    }

    /// Where `identity` is, for region monitoring.
    public func placement(of identity: BeaconIdentity) -> SightingRoom {
        switch locator.placement(of: identity) {
        case .room(let name)?: return .room(name)
        case .unknown?: return .unknown
        case nil: return .unplaced
        }
    }

    public mutating func receiverWentOffline(_ receiver: ReceiverID) { locator.receiverWentOffline(receiver) }
    public mutating func receiverCameOnline(_ receiver: ReceiverID) { locator.receiverCameOnline(receiver) }

    /// Each receiver's (calibrated, smoothed) distance to `identity` from fresh readings, by room: the nearest when a
    /// room has several receivers.
    public func distances(of identity: BeaconIdentity, at now: Timestamp) -> [String: Double] {
        var byRoom: [String: Double] = [:]
        for (_, heard) in locator.distances(of: identity, at: now) {
            byRoom[heard.room] = min(byRoom[heard.room] ?? .infinity, heard.distance)
        }
        return byRoom
    }

    /// Forgets beacons unheard for `age` (called about once a minute): tables stay as large as the beacons around.
    public mutating func forget(notHeardFor age: Duration, at now: Timestamp) {
        locator.forget(notHeardFor: age, at: now)
        forgetReadings(before: now - age)
    }

    /// Metres counted for a reading without a usable distance.
    public static let unmeasuredDistance = 30.0

    /// Beacons whose raw readings are kept for calibration.
    public static let readingCapacity = 10_000

    private mutating func forgetReadings(before cutoff: Timestamp) {
        latestReadings = latestReadings.compactMapValues { rooms in
            let fresh = rooms.filter { $0.value.time >= cutoff }
            return fresh.isEmpty ? nil : fresh
        }
    }

    /// A new configuration (reload): calibrations and overrides apply from the next reading; where beacons are is kept
    /// unless the room hysteresis changed.
    public mutating func reconfigure(
        localRoom: String, localRSSIOffset: Double = 0, calibrations: [String: ReceiverCalibration],
        measuredPower: [BeaconIdentity: Int], configuration: RoomConfiguration
    ) {
        self.localRoom = localRoom
        self.localRSSIOffset = localRSSIOffset
        self.calibrations = calibrations
        self.measuredPower = measuredPower
        // Placements and offline receivers are kept: a beacon beside an offline receiver stays unknown.
        locator.reconfigure(configuration)
    }
}
