import Foundation

/// How often a beacon is heard, learned from its sightings by any receiver, and how long a silence has to last before
/// it is more likely gone than merely unheard.
///
/// Model: a beacon advertises every `interval` and each advertisement reaches some receiver with probability `p`, so
/// the gaps between sightings are whole numbers of intervals, geometrically distributed. The chance that a present
/// beacon goes unheard for `t` is (1 − p)^(t / interval); the exit comes once that is below a chance ε:
/// t = interval · ln(ε) / ln(1 − p). `interval` is the shortest recent gap (BLE adds 0–10 ms of jitter, never
/// less) and p is interval / mean gap. Losses come in bursts in real rooms (a body between beacon and receiver), so
/// the silence is also never shorter than 1.5 × the longest recent gap. The answer is clamped by the caller.
public struct SightingRhythm: Hashable, Sendable {
    /// Sightings closer than this are one advertisement heard by several receivers (20 ms is BLE's shortest
    /// advertising interval).
    public static let sameAdvertisement: Int64 = 20_000
    /// Gaps remembered.
    public static let capacity = 64
    /// Gaps needed before the rhythm is trusted.
    public static let gapsNeeded = 8

    private var gaps: [Int64] = []
    private var nextGap = 0
    private(set) public var lastSighting: Int64?

    public init() {}

    public var gapCount: Int { gaps.count }

    /// Counts a sighting at `time`, µs. A gap longer than `longestGap` (the longest exit) is an absence, not part
    /// of the rhythm: the beacon was gone, so it is not learned.
    public mutating func record(_ time: Int64, longestGap: Int64 = .max) {
        defer { lastSighting = max(lastSighting ?? time, time) }
        guard let last = lastSighting else { return }
        let gap = time - last
        guard gap >= Self.sameAdvertisement, gap <= longestGap else { return }
        if gaps.count < Self.capacity {
            gaps.append(gap)
        } else {
            gaps[nextGap] = gap
            nextGap = (nextGap + 1) % Self.capacity
        }
    }

    /// The learned interval, µs; nil until `gapsNeeded` gaps were seen.
    public var interval: Int64? { gaps.count >= Self.gapsNeeded ? gaps.min() : nil }

    /// The share of advertisements heard: interval / mean gap; nil until learned.
    public var receptionRate: Double? {
        guard let interval else { return nil }
        let mean = Double(gaps.reduce(0, +)) / Double(gaps.count)
        return min(1, Double(interval) / mean)
    }

    /// How long a silence must last before a present beacon's chance of being wrongly exited within an hour is below
    /// `chancePerHour`, µs; nil until learned. A silence of that length may start at any advertisement, so each
    /// silence is held to `chancePerHour` / (advertisements per hour).
    ///
    /// The miss rate is taken at its upper 95 % bound (Wilson's interval), not its estimate: `capacity` gaps measure
    /// it only roughly (at 50 % loss, ±12 %), none missed in 64 does not mean none will be, and an underestimated
    /// miss rate is a false exit.
    public func silence(forChancePerHour chancePerHour: Double) -> Int64? {
        guard let interval, let rate = receptionRate, let longest = gaps.max() else { return nil }
        let advertisements = Double(gaps.reduce(0, +)) / Double(interval)
        let estimate = 1 - rate
        let z = 1.645, z2 = z * z
        let bound = (estimate + z2 / (2 * advertisements)
            + z * (estimate * (1 - estimate) / advertisements + z2 / (4 * advertisements * advertisements)).squareRoot())
            / (1 + z2 / advertisements)
        let missed = min(max(bound, 1e-6), 0.99)
        let chance = chancePerHour / max(1, 3_600_000_000 / Double(interval))
        let model = Double(interval) * log(chance) / log(missed)
        let bursts = 1.5 * Double(longest)
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
