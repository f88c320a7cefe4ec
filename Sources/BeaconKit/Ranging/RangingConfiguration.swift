/// How a ``BeaconRanger`` smooths, estimates distance, forgets and bounds its table.
public struct RangingConfiguration: Hashable, Sendable {
    /// The RSSI filter each tracked beacon gets. Default: AltBeacon's running average (20 s window,
    /// trimmed), AltBeacon's default filter.
    public var filter: RSSIFilterKind
    /// RSSI → metres. Default: AltBeacon's curve fit (Nexus 5 coefficients), AltBeacon's default.
    /// In the evaluation in docs/ranging.md (three phones, 0–3.4 m) it had the smallest error of the
    /// models not fitted to that data (median 0.52 m, 90th percentile 1.28 m with this filter) and the
    /// best proximity agreement; it underestimates beyond about 2 m.
    public var distanceModel: DistanceModel
    /// A beacon not heard for this long leaves the table and the results. Default 10 s.
    ///
    /// Core Location does not document its figure; it keeps an unheard beacon for a few seconds with
    /// RSSI 0 and proximity unknown, and AltBeacon drops one after 5 s (`DEFAULT_MAX_TRACKING_AGE`).
    /// 10 s is chosen because many battery beacons advertise only about once a second: with half the
    /// packets lost in a busy 2.4 GHz band, five misses in a row happen about 3 % of the time and ten
    /// about 0.1 %, so 10 s stops such beacons flickering out of the results. Until then they are
    /// reported with RSSI 0 and accuracy −1, as Core Location does.
    public var beaconExpiry: Duration
    /// Most beacons tracked at once; when full, the beacon heard least recently is evicted for the
    /// new one. Default 10,000.
    ///
    /// A flood of forged identities matching a UUID-only constraint must not grow memory without
    /// bound. 10,000 is two orders of magnitude above the beacons a dense site has within radio range
    /// and the scale ``RegionIndex`` is built for; an entry without samples costs a few hundred
    /// bytes, and the samples the running average holds are bounded by what the air can carry in 20 s
    /// (a few thousand advertisements a second per channel), so a full table costs a few megabytes.
    public var maxTrackedBeacons: Int
    /// Where `immediate`, `near` and `far` begin. Default: 0.5 m and 3 m.
    public var proximityThresholds: ProximityThresholds

    public init(
        filter: RSSIFilterKind = .runningAverage,
        distanceModel: DistanceModel = .altBeacon,
        beaconExpiry: Duration = .seconds(10),
        maxTrackedBeacons: Int = 10_000,
        proximityThresholds: ProximityThresholds = .coreLocationApproximation
    ) {
        self.filter = filter
        self.distanceModel = distanceModel
        self.beaconExpiry = beaconExpiry
        self.maxTrackedBeacons = maxTrackedBeacons
        self.proximityThresholds = proximityThresholds
    }
}
