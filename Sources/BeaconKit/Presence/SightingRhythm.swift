import Foundation

/// How often a beacon is heard, learned from its sightings by any receiver, and how long a silence has to last before
/// it is more likely gone than merely unheard.
///
/// Model: a beacon advertises every `interval` and each advertisement reaches some receiver with probability `p`, so
/// the gaps between sightings are whole numbers of intervals, geometrically distributed. The chance that a present
/// beacon goes unheard for `t` is (1 − p)^(t / interval); the exit comes once that is below a chance ε:
/// t = interval · ln(ε) / ln(1 − p). `interval` is the mean of the recent gaps in the shortest cluster (those under
/// 1.5 × the shortest: one interval each, give or take BLE's 0–10 ms advertising jitter and the 5–60 ms delivery
/// latency of remote receivers, which the shortest gap alone would take as a shorter interval and so as missed
/// advertisements) and p is interval / mean gap. Losses come in bursts in real rooms (a body between beacon and receiver), so
/// the silence is also never shorter than the longest gap seen (recently, or within hours) and one interval more. The
/// caller clamps the answer.
public struct SightingRhythm: Hashable, Sendable {
    /// Gaps remembered: 256 advertisements bound the miss rate to a few per cent.
    public static let capacity = 256
    /// Gaps needed before the rhythm is trusted.
    public static let gapsNeeded = 8
    /// The shortest and longest gap are recomputed every this many new gaps (and when first trusted), so a sighting
    /// costs O(1), not a pass over the ring.
    static let refreshEvery = 8

    /// The latest `capacity` gaps.
    private var gaps = GapRing()
    private var sinceRefresh = 0
    private var shortest: Int64?
    /// The mean of the gaps under 1.5 × `shortest`, from the last refresh.
    private var clusterMean: Int64?
    private var longest: Int64?
    private(set) public var lastSighting: Int64?
    /// Which readings are one advertisement heard by several receivers (`AdvertisementGrouping`).
    private var grouping = AdvertisementGrouping()
    /// The longest gap seen over a long horizon: a beacon that once went unheard for 30 s amid a 0.3 s rhythm
    /// (recorded runs show it) may do so again long after that gap has left the ring.
    private var longestEver = LongestGap()

    /// The latest gaps between sightings, µs, clamped to UInt32 (71 minutes: longer is an absence for any sensible
    /// exit_timeout): 1 KiB per beacon, and their sum.
    struct GapRing: Hashable, Sendable {
        private(set) var values: [UInt32] = []
        private var next = 0
        private(set) var total: Int64 = 0

        var count: Int { values.count }

        mutating func append(_ gap: UInt32) {
            if values.count < SightingRhythm.capacity {
                values.append(gap)
            } else {
                total -= Int64(values[next])
                values[next] = gap
                next = (next + 1) % SightingRhythm.capacity
            }
            total += Int64(gap)
        }
    }

    /// The longest gap seen, which halves for every hour since it was seen, µs.
    struct LongestGap: Hashable, Sendable {
        private var gap: Int64 = 0
        private var at: Int64 = 0

        /// As it counts at `time`: halved for every whole hour since.
        func remembered(at time: Int64) -> Int64 {
            let hours = max(0, (time - at) / 3_600_000_000)
            return hours >= 62 ? 0 : gap >> hours
        }

        mutating func record(_ gap: Int64, at time: Int64) {
            guard gap >= remembered(at: time) else { return }
            self.gap = gap
            at = time
        }
    }

    public init() {}

    public var gapCount: Int { gaps.count }

    /// Counts a sighting by `receiver` at `time`, µs (its arrival: readings of one advertisement by several receivers
    /// count once, `AdvertisementGrouping`). A gap longer than `longestGap` (the longest exit) is an absence, not part
    /// of the rhythm: the beacon was gone, so it is not learned.
    public mutating func record(_ time: Int64, by receiver: ReceiverID = .local, longestGap: Int64 = .max) {
        defer { lastSighting = max(lastSighting ?? time, time) }
        guard let gap = grouping.record(receiver, at: time).gap, gap > 0, gap <= longestGap else { return }
        let stored = UInt32(clamping: gap)
        gaps.append(stored)
        // A new gap can only lower the shortest or raise the longest; an evicted one is caught at the next refresh,
        // and until then the stale values only make the silence longer (safer).
        shortest = min(shortest ?? Int64(stored), Int64(stored))
        longest = max(longest ?? Int64(stored), Int64(stored))
        longestEver.record(gap, at: time)
        sinceRefresh += 1
        if gaps.count == Self.gapsNeeded || sinceRefresh >= Self.refreshEvery {
            shortest = gaps.values.min().map(Int64.init)
            longest = gaps.values.max().map(Int64.init)
            if let shortest {
                var sum: Int64 = 0, count: Int64 = 0
                for gap in gaps.values where Int64(gap) * 2 < shortest * 3 {
                    sum += Int64(gap)
                    count += 1
                }
                clusterMean = sum / max(1, count)
            }
            sinceRefresh = 0
        }
    }

    /// The learned interval, µs; nil until `gapsNeeded` gaps were seen.
    public var interval: Int64? { gaps.count >= Self.gapsNeeded ? clusterMean ?? shortest : nil }

    /// The share of advertisements heard: interval / mean gap; nil until learned.
    public var receptionRate: Double? {
        guard let interval, gaps.total > 0 else { return nil }
        return min(1, Double(interval) * Double(gaps.count) / Double(gaps.total))
    }

    /// How long a silence must last before a present beacon's chance of being wrongly exited within an hour is below
    /// `chancePerHour`, µs; nil until learned. A silence of that length may start at any advertisement, so each
    /// silence is held to `chancePerHour` / (advertisements per hour).
    ///
    /// The miss rate is taken at its upper 95 % bound (Wilson's interval), not its estimate: `capacity` gaps measure
    /// it only roughly, none missed in 256 does not mean none will be, and an underestimated miss rate is a false
    /// exit.
    public func silence(forChancePerHour chancePerHour: Double) -> Int64? {
        guard let interval, let rate = receptionRate, let longest else { return nil }
        let advertisements = Double(gaps.total) / Double(interval)
        let estimate = 1 - rate
        let z = 1.645, z2 = z * z
        let bound =
            (estimate + z2 / (2 * advertisements)
                + z * (estimate * (1 - estimate) / advertisements + z2 / (4 * advertisements * advertisements)).squareRoot())
            / (1 + z2 / advertisements)
        let missed = min(max(bound, 1e-6), 0.99)
        let chance = chancePerHour / max(1, 3_600_000_000 / Double(interval))
        let model = Double(interval) * log(chance) / log(missed)
        let bursts = Double(max(longest, longestEver.remembered(at: lastSighting ?? 0)) + interval)
        let result = max(model, bursts)
        return result >= 9e18 ? .max : Int64(result.rounded(.up))
    }
}

/// Adaptive exits: each beacon's exit comes after a silence learned from its own rhythm (`SightingRhythm`), between
/// `minimum` and the monitor's `exitTimeout`.
public struct AdaptiveExit: Hashable, Sendable {
    /// The shortest silence that exits (`exit_timeout_min`).
    public var minimum: Duration
    /// The chance per hour that a present beacon is wrongly exited (`exit_chance`): 0.001 is one false exit per beacon
    /// in about six weeks of presence.
    public var chance: Double

    public static let chanceRange = 1e-12...0.5

    public init(minimum: Duration, chance: Double = 1e-3) throws(MonitoringConfigurationError) {
        guard minimum >= .milliseconds(100), minimum <= MonitoringConfiguration.longestExitTimeout else {
            throw .exitTimeoutMinimumOutOfRange(minimum)
        }
        guard chance.isFinite, Self.chanceRange.contains(chance) else { throw .exitChanceOutOfRange(chance) }
        self.minimum = minimum
        self.chance = chance
    }
}
