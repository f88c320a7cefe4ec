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
    /// With a floor plan: every beacon's position from the plan's receivers, and its room from that position (the
    /// `RoomLocator` then serves ranging's distances only).
    public private(set) var plan: PlanPlacement<BeaconIdentity>?
    /// Each receiver's name as its readings came, for its going offline.
    private var receiverNames: [ReceiverID: String] = [:]
    /// Each receiver's latest RSSI of each beacon, raw (before calibration), for `beaconctl calibrate`.
    public private(set) var latestReadings: [BeaconIdentity: [String: ReceiverReading]] = [:]
    /// What receivers last heard of each other, for `beaconctl calibrate --receivers`.
    public private(set) var hearings = ReceiverHearings()

    /// What one receiver last heard of one beacon.
    public struct ReceiverReading: Hashable, Sendable {
        public var rssi: Double
        /// The measured power used (the override, or what the beacon advertised).
        public var measuredPower: Int
        public var time: Timestamp
    }

    public init(
        localRoom: String, localRSSIOffset: Double = 0, calibrations: [String: ReceiverCalibration] = [:],
        measuredPower: [BeaconIdentity: Int] = [:], configuration: RoomConfiguration = .default, floorPlan: FloorPlan? = nil
    ) {
        self.localRoom = localRoom
        self.localRSSIOffset = localRSSIOffset
        self.calibrations = calibrations
        self.measuredPower = measuredPower
        locator = RoomLocator(configuration: configuration)
        plan = floorPlan.map { PlanPlacement(plan: $0, calibrations: calibrations) }
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
        if let rssi, rssi.isFinite, plan != nil {
            // A beacon that does not say its RSSI at one metre is placed as a typical one: the locator compares
            // receivers' readings of one beacon, so a wrong constant moves it little.
            let power = power.flatMap { $0 == 0 ? nil : Double($0) } ?? Self.typicalMeasuredPower
            plan!.observe(identity, rssi: rssi, measuredPower: power, by: room, at: now)
        }
        // Kept with or without a plan, so a plan given by a reload knows which receivers are offline.
        if receiverNames[receiver] != room { receiverNames[receiver] = room }
        // Heard but unmeasurable (no RSSI, or a beacon advertising measured power 0): it is near this receiver, how near
        // cannot be said. Placed as far, so it names a room no other receiver hears it in, and never beats a measurement.
        let usable = metres.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? Self.unmeasuredDistance
        locator.observe(identity, distance: usable, by: receiver, in: room, at: now)
        if plan != nil { return plan!.update(identity, at: now) }
        return placement(of: identity)
    }

    /// Where `identity` is on the floor plan, as last worked out; nil without a plan or before any plan receiver's
    /// reading.
    public func position(of identity: BeaconIdentity) -> Position? { plan?.position(of: identity) }

    /// Where `identity` is, for region monitoring: with a floor plan, the room holding its position.
    public func placement(of identity: BeaconIdentity) -> SightingRoom {
        if let plan { return plan.room(of: identity) }
        switch locator.placement(of: identity) {
        case .room(let name)?: return .room(name)
        case .unknown?: return .unknown
        case nil: return .unplaced
        }
    }

    public mutating func receiverWentOffline(_ receiver: ReceiverID) {
        locator.receiverWentOffline(receiver)
        if let name = receiverNames[receiver] { plan?.receiverWentOffline(name) }
    }

    /// A receiver evicted from the receiver table: its name goes too.
    public mutating func forgetReceiverName(_ receiver: ReceiverID) {
        receiverNames[receiver] = nil
    }

    public mutating func receiverCameOnline(_ receiver: ReceiverID) {
        locator.receiverCameOnline(receiver)
        if let name = receiverNames[receiver] { plan?.receiverCameOnline(name) }
    }

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
        plan?.forget(notHeardSince: now - age)
        forgetReadings(before: now - age)
    }

    /// dBm at one metre assumed for a beacon that does not say (iBeacon's usual −59).
    public static let typicalMeasuredPower = -59.0

    /// Metres counted for a reading without a usable distance.
    public static let unmeasuredDistance = 30.0

    /// Beacons whose raw readings are kept for calibration.
    public static let readingCapacity = 10_000

    /// `listener` heard the receiver `advertiser` (an ESPresense node's `node:` reading): kept for calibration only,
    /// and only between two receivers of the floor plan (the distance it gives is the point; anyone on the broker
    /// can invent nodes, and must not fill the table for the real ones). A receiver is no beacon, so it is placed
    /// nowhere. Without a measured power, a typical beacon's.
    public mutating func receiverHeard(_ advertiser: String, rssi: Double, measuredPower: Int?, by listener: String, at now: Timestamp) {
        guard let plan, plan.places(listener), plan.places(advertiser) else { return }
        let power = measuredPower.flatMap { $0 == 0 ? nil : $0 } ?? Int(Self.typicalMeasuredPower)
        hearings.record(advertiser, rssi: rssi, measuredPower: power, by: listener, at: now)
    }

    private mutating func forgetReadings(before cutoff: Timestamp) {
        hearings.forget(before: cutoff)
        latestReadings = latestReadings.compactMapValues { rooms in
            let fresh = rooms.filter { $0.value.time >= cutoff }
            return fresh.isEmpty ? nil : fresh
        }
    }

    /// A new configuration (reload): calibrations and overrides apply from the next reading; where beacons are is kept
    /// unless the room hysteresis changed. A changed floor plan (or calibration under it) starts its positions
    /// afresh; an unchanged one keeps them.
    public mutating func reconfigure(
        localRoom: String, localRSSIOffset: Double = 0, calibrations: [String: ReceiverCalibration],
        measuredPower: [BeaconIdentity: Int], configuration: RoomConfiguration, floorPlan: FloorPlan? = nil
    ) {
        if floorPlan != plan?.plan || (floorPlan != nil && calibrations != self.calibrations) {
            plan = floorPlan.map { PlanPlacement(plan: $0, calibrations: calibrations) }
            // Receivers still offline stay so on the new plan.
            for receiver in locator.offlineReceivers { if let name = receiverNames[receiver] { plan?.receiverWentOffline(name) } }
        }
        self.localRoom = localRoom
        self.localRSSIOffset = localRSSIOffset
        self.calibrations = calibrations
        self.measuredPower = measuredPower
        // Placements and offline receivers are kept: a beacon beside an offline receiver stays unknown.
        locator.reconfigure(configuration)
    }
}
