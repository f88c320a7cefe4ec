public import BeaconKit
public import Foundation

/// Decides which of this receiver's sightings become published readings: only beacons the administrator chose
/// and only sightings with an RSSI and a distance (at most `ESPresenseReading.longestDistance`),
/// the first sighting of a beacon at once, then at most one reading per beacon per `interval` (a beacon that
/// advertises at 10 Hz costs one message a second, not ten), each with the smoothed RSSI (the ranging filter,
/// plus this receiver's offset) and the distance ranging would give. Pure and clocked by the sightings.
public struct ReadingPublisher: Sendable {
    /// Which beacons are published: nil for every beacon heard (a private device only if `publishedKeys` has it).
    public let constraints: [BeaconIdentityConstraint]?
    /// The private devices whose readings may be published, by key fingerprint: their ids are ESPresense's `irk:`
    /// ids, which carry the key, so only the administrator's devices (devices.d) are here, never an app's own.
    public var publishedKeys: [UUID: IdentityResolvingKey] = [:]
    public let interval: Duration
    /// dB added to every RSSI (`rssi_offset`), published as `rxAdj`.
    public let rssiOffset: Double
    public let ranging: RangingConfiguration
    /// Beacons tracked at most; past it, the one heard longest ago is forgotten (a flood of identities costs
    /// bounded memory).
    public let capacity: Int

    private struct Track: Sendable {
        var filter: AnyRSSIFilter
        var firstSeen: Timestamp
        var lastSeen: Timestamp
        var sightings: Int
        var lastPublished: Timestamp?
    }

    private var tracks: [BeaconIdentity: Track] = [:]

    public init(
        constraints: [BeaconIdentityConstraint]?, interval: Duration, rssiOffset: Double,
        ranging: RangingConfiguration = RangingConfiguration(), capacity: Int = 10_000
    ) {
        self.constraints = constraints
        self.interval = interval
        self.rssiOffset = rssiOffset
        self.ranging = ranging
        self.capacity = max(1, capacity)
    }

    public var trackedCount: Int { tracks.count }

    /// Whether `identity` is one of the beacons this node publishes (a private device only if its key may go out).
    public func publishes(_ identity: BeaconIdentity) -> Bool {
        guard constraints?.contains(where: { $0.matches(identity) }) ?? true else { return false }
        return identity.kind != .privateDevice || publishedKeys[identity.uuid] != nil
    }

    /// The reading to publish for this sighting, or nil (not a published beacon, no RSSI, or too soon).
    public mutating func observe(_ observation: BeaconObservation) -> ESPresenseReading? {
        let identity = observation.frame.identity
        guard let rssi = observation.rssi, publishes(identity) else { return nil }
        var key: IdentityResolvingKey?
        if identity.kind == .privateDevice { key = publishedKeys[identity.uuid] }
        let now = observation.timestamp
        if tracks[identity] == nil, tracks.count >= capacity, let oldest = tracks.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            tracks[oldest.key] = nil
        }
        var track = tracks[identity] ?? Track(filter: ranging.filter.makeFilter(), firstSeen: now, lastSeen: now, sightings: 0)
        track.filter.add(Int(rssi), at: now)
        track.sightings += 1
        track.lastSeen = max(track.lastSeen, now)
        defer { tracks[identity] = track }
        if let last = track.lastPublished, now - last < interval { return nil }
        let smoothed = (track.filter.smoothedRSSI(at: now) ?? Double(rssi)) + rssiOffset
        let measuredPower = Int(observation.frame.measuredPower)
        let distance = ranging.distanceModel.accuracy(rssi: smoothed, measuredPower: measuredPower)
        // A reading without a distance is no use to any consumer (mqtt_room requires one), and one beyond
        // `longestDistance` other nodes refuse: wait for a better one.
        guard distance > 0, distance <= ESPresenseReading.longestDistance else { return nil }
        track.lastPublished = now
        let meanInterval =
            track.sightings > 1
            ? Int(((track.lastSeen - track.firstSeen) / (track.sightings - 1)) / .milliseconds(1)) : nil
        return ESPresenseReading(
            id: ESPresense.deviceID(identity, key: key), mac: ESPresenseReading.mac(observation.address),
            rssiAtOneMetre: measuredPower, rssi: smoothed, receiverAdjustment: Int(rssiOffset.rounded()),
            distance: distance, interval: meanInterval)
    }
}
