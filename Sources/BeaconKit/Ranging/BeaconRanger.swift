import Foundation

/// Core Location's beacon ranging: clients start ranging a constraint under a key; every
/// observation of a matching beacon feeds that beacon's RSSI filter; about once a second
/// ``rangeBeacons(at:)`` reports, per key, the matching beacons with smoothed RSSI, estimated
/// distance and proximity, nearest first.
///
/// Beacons are tracked by identity (UUID, major, minor), never by Bluetooth address (phones rotate
/// addresses; several transmitters may share an identity). Only beacons matching some ranged
/// constraint are tracked, the table is capped, and unheard beacons expire, so memory is bounded
/// whatever is on the air. Pure: time comes from the observations and from `now`.
public struct BeaconRanger<Key: Hashable & Sendable>: Sendable {
    public let configuration: RangingConfiguration

    private var index = RegionIndex<Key>()
    /// Keys in the order ranging started, so results come in a stable order.
    private var order: [Key] = []
    /// Tracked beacons live in slots; the dictionary finds a beacon's slot, and the recency list
    /// orders slots without hashing (one dictionary probe per sighting).
    private var slotOf: [BeaconIdentity: Int] = [:]
    /// Parallel arrays indexed by slot: the identity (nil when the slot is free) and its state.
    /// Kept apart so a ranging cycle reads identities and mutates beacons in place, without
    /// copying (and retaining) each beacon's sample buffer.
    private var identities: [BeaconIdentity?] = []
    private var beacons: [TrackedBeacon] = []
    private var freeSlots: [Int] = []
    private var recency = RecencyList()

    public init(configuration: RangingConfiguration = RangingConfiguration()) {
        self.configuration = configuration
    }

    /// Beacons currently in the table.
    public var trackedBeaconCount: Int { slotOf.count }

    /// Keys being ranged, in the order ranging started.
    public var rangedKeys: [Key] { order }

    public func constraint(for key: Key) -> BeaconIdentityConstraint? { index.constraint(for: key) }

    /// Starts ranging `constraint` for `key`; a key already ranging switches to the new constraint.
    public mutating func startRanging(_ constraint: BeaconIdentityConstraint, key: Key) {
        let previous = index.constraint(for: key)
        index.insert(constraint, for: key)
        if previous == nil {
            order.append(key)
        } else if previous != constraint {
            forgetUnrangedBeacons()
        }
    }

    /// Stops ranging for `key`; beacons no other key still ranges leave the table.
    /// Returns the constraint the key had, `nil` if it was not ranging.
    @discardableResult
    public mutating func stopRanging(_ key: Key) -> BeaconIdentityConstraint? {
        guard let constraint = index.remove(key) else { return nil }
        order.removeAll { $0 == key }
        forgetUnrangedBeacons()
        return constraint
    }

    /// Feeds one sighting. Ignored unless the beacon matches a ranged constraint.
    public mutating func observe(_ observation: BeaconObservation) {
        guard
            let slot = slot(
                for: observation.identity, measuredPower: observation.frame.measuredPower,
                at: observation.timestamp)
        else { return }
        beacons[slot].record(observation)
    }

    /// Another receiver heard `identity` (a fleet's reading, placed in rooms): in a cycle this adapter does not hear
    /// it, the beacon is reported from the nearest receiver's measurement (``rangeBeacons(at:fleet:)``). One
    /// dictionary probe; nothing allocated unless the beacon is new. Ignored unless it matches a ranged constraint.
    public mutating func observeRemotely(_ identity: BeaconIdentity, measuredPower: Int?, at time: Timestamp) {
        guard let slot = slot(for: identity, measuredPower: Int8(clamping: measuredPower ?? 0), at: time) else { return }
        beacons[slot].recordRemotely(at: time)
    }

    /// The slot of a beacon matching a ranged constraint, tracked from now if new (the stalest evicted when the table
    /// is full); nil when no ranged constraint matches it.
    private mutating func slot(for identity: BeaconIdentity, measuredPower: Int8, at time: Timestamp) -> Int? {
        guard index.containsMatch(for: identity) else { return nil }
        if let slot = slotOf[identity] {
            recency.touch(slot)
            return slot
        }
        guard configuration.maxTrackedBeacons > 0 else { return nil }
        if slotOf.count >= configuration.maxTrackedBeacons, let stalest = recency.oldest {
            forget(slot: stalest)
        }
        let beacon = TrackedBeacon(filter: configuration.filter.makeFilter(), measuredPower: measuredPower, lastSeen: time)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            identities[slot] = identity
            beacons[slot] = beacon
        } else {
            slot = beacons.count
            identities.append(identity)
            beacons.append(beacon)
        }
        slotOf[identity] = slot
        recency.touch(slot)
        return slot
    }

    /// One ranging cycle at `now`: drops beacons unheard for ``RangingConfiguration/beaconExpiry``,
    /// then returns one result per ranged key (in the order ranging started), each with its matching
    /// beacons sorted nearest first (known accuracy ascending, unknown last, ties by identity).
    /// Beacons not heard since the previous cycle are reported with RSSI 0, accuracy −1 and proximity
    /// unknown, as Core Location does. Call it about once a second.
    ///
    /// With `fleet` (a node with rooms), a beacon this adapter did not hear this cycle but another receiver did
    /// (``observeRemotely(_:measuredPower:at:)``) is reported from the nearest receiver's measurement: its calibrated
    /// distance as accuracy, its RSSI, and its room as ``RangedBeacon/receiver``; what this adapter hears keeps its
    /// own measurement, under `fleet.localRoom`.
    public mutating func rangeBeacons(at now: Timestamp, fleet: RoomPresence? = nil) -> [RangingResult<Key>] {
        expireBeacons(at: now)
        var ranged: [(beacon: RangedBeacon, order: IdentityOrder)] = []
        ranged.reserveCapacity(slotOf.count)
        for slot in identities.indices {
            guard let identity = identities[slot] else { continue }
            let beacon = beacons[slot].rangingCycle(at: now, identity: identity, configuration: configuration, fleet: fleet)
            ranged.append((beacon, IdentityOrder(identity)))
        }
        ranged.sort { lhs, rhs in
            let lhsKnown = lhs.beacon.accuracy >= 0
            let rhsKnown = rhs.beacon.accuracy >= 0
            if lhsKnown != rhsKnown { return lhsKnown }
            if lhsKnown && lhs.beacon.accuracy != rhs.beacon.accuracy {
                return lhs.beacon.accuracy < rhs.beacon.accuracy
            }
            return lhs.order < rhs.order
        }
        var byKey: [Key: [RangedBeacon]] = [:]
        for entry in ranged {
            index.forEachMatch(of: entry.beacon.identity) { key in
                byKey[key, default: []].append(entry.beacon)
            }
        }
        return order.compactMap { key in
            guard let constraint = index.constraint(for: key) else { return nil }
            return RangingResult(key: key, constraint: constraint, beacons: byKey[key] ?? [])
        }
    }

    private mutating func expireBeacons(at now: Timestamp) {
        let expiry = configuration.beaconExpiry.wholeMicroseconds
        for slot in identities.indices where identities[slot] != nil {
            if (now - beacons[slot].lastSeen).wholeMicroseconds >= expiry { forget(slot: slot) }
        }
    }

    private mutating func forgetUnrangedBeacons() {
        if index.isEmpty {
            slotOf.removeAll()
            identities.removeAll()
            beacons.removeAll()
            freeSlots.removeAll()
            recency.removeAll()
            return
        }
        for slot in identities.indices {
            if let identity = identities[slot], !index.containsMatch(for: identity) { forget(slot: slot) }
        }
    }

    private mutating func forget(slot: Int) {
        guard let identity = identities[slot] else { return }
        slotOf.removeValue(forKey: identity)
        identities[slot] = nil
        // Release the sample buffer now; the slot is reused by the next new beacon.
        beacons[slot].filter = configuration.filter.makeFilter()
        freeSlots.append(slot)
        recency.remove(slot)
    }
}

/// What the ranger keeps per beacon between cycles.
private struct TrackedBeacon: Sendable {
    var filter: AnyRSSIFilter
    var measuredPower: Int8
    var lastSeen: Timestamp
    /// An Eddystone beacon's latest telemetry (TLM from the same address).
    var telemetry: EddystoneTelemetry?
    /// This adapter heard it since the previous cycle.
    var heardThisCycle = false
    /// Another receiver heard it since the previous cycle.
    var heardElsewhereThisCycle = false

    init(filter: AnyRSSIFilter, measuredPower: Int8, lastSeen: Timestamp) {
        self.filter = filter
        self.measuredPower = measuredPower
        self.lastSeen = lastSeen
    }

    /// A sighting without RSSI still counts as heard (the beacon is there), and reports whatever
    /// the filter holds from earlier samples.
    mutating func record(_ observation: BeaconObservation) {
        if let rssi = observation.rssi { filter.add(Int(rssi), at: observation.timestamp) }
        measuredPower = observation.frame.measuredPower
        lastSeen = max(lastSeen, observation.timestamp)
        if let telemetry = observation.telemetry { self.telemetry = telemetry }
        heardThisCycle = true
    }

    /// Another receiver's reading: the beacon is there; the measurement is read from the rooms at the cycle.
    mutating func recordRemotely(at time: Timestamp) {
        lastSeen = max(lastSeen, time)
        heardElsewhereThisCycle = true
    }

    /// This cycle's report; starts the next cycle. This adapter's own measurement first, then the nearest other
    /// receiver's, else not heard.
    mutating func rangingCycle(
        at now: Timestamp, identity: BeaconIdentity, configuration: RangingConfiguration,
        fleet: RoomPresence?
    ) -> RangedBeacon {
        defer {
            heardThisCycle = false
            heardElsewhereThisCycle = false
        }
        var beacon = rangedBeacon(at: now, identity: identity, configuration: configuration, fleet: fleet)
        beacon.telemetry = telemetry
        return beacon
    }

    private func rangedBeacon(
        at now: Timestamp, identity: BeaconIdentity, configuration: RangingConfiguration,
        fleet: RoomPresence?
    ) -> RangedBeacon {
        let thresholds = configuration.proximityThresholds
        if heardThisCycle, let smoothed = filter.smoothedRSSI(at: now), smoothed.isFinite {
            let accuracy = configuration.distanceModel.accuracy(rssi: smoothed, measuredPower: Int(measuredPower))
            return RangedBeacon(
                identity: identity, rssi: Int(smoothed.rounded()), accuracy: accuracy,
                proximity: thresholds.proximity(forAccuracy: accuracy),
                measuredPower: measuredPower, timestamp: lastSeen, receiver: fleet?.localRoom)
        }
        if heardElsewhereThisCycle, let measured = fleet?.nearestReceiver(of: identity, at: now) {
            return RangedBeacon(
                identity: identity, rssi: measured.rssi.map { Int($0.rounded()) } ?? 0,
                accuracy: measured.distance, proximity: thresholds.proximity(forAccuracy: measured.distance),
                measuredPower: measured.measuredPower.map { Int8(clamping: $0) } ?? measuredPower,
                timestamp: lastSeen, receiver: measured.receiver)
        }
        return RangedBeacon(
            identity: identity, rssi: 0, accuracy: -1, proximity: .unknown,
            measuredPower: measuredPower, timestamp: lastSeen)
    }
}

/// ``BeaconIdentity``'s order (UUID string, major, minor) without building strings: the uppercase
/// hex UUID string sorts exactly as the UUID's bytes do, so comparing the bytes as two big-endian
/// integers gives the same order at a fraction of the cost when sorting thousands of beacons.
private struct IdentityOrder: Comparable {
    var kind: UInt8
    var high: UInt64
    var low: UInt64
    var major: UInt16
    var minor: UInt16

    init(_ identity: BeaconIdentity) {
        let b = identity.uuid.uuid
        kind = identity.kind.rawValue
        func word(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) -> UInt64 {
            UInt64(b0) << 24 | UInt64(b1) << 16 | UInt64(b2) << 8 | UInt64(b3)
        }
        high = word(b.0, b.1, b.2, b.3) << 32 | word(b.4, b.5, b.6, b.7)
        low = word(b.8, b.9, b.10, b.11) << 32 | word(b.12, b.13, b.14, b.15)
        major = identity.major
        minor = identity.minor
    }

    static func < (lhs: IdentityOrder, rhs: IdentityOrder) -> Bool {
        (lhs.kind, lhs.high, lhs.low, lhs.major, lhs.minor) < (rhs.kind, rhs.high, rhs.low, rhs.major, rhs.minor)
    }
}
