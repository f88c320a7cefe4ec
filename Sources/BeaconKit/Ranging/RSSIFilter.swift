/// Smooths one beacon's RSSI samples before they become a distance (AltBeacon's `RssiFilter`).
///
/// RSSI from a single advertisement swings by 10 dB or more (multipath, the three advertising
/// channels), and the distance models are exponential in RSSI, so raw samples make distances jump.
/// Filters are value types: each tracked beacon owns its own, and time is passed in, never read.
public protocol RSSIFilter: Sendable {
    /// Adds one sample (dBm) received at `time`.
    mutating func add(_ rssi: Int, at time: Timestamp)

    /// The smoothed RSSI (dBm) at `now`, or `nil` when the filter holds no usable sample.
    func smoothedRSSI(at now: Timestamp) -> Double?
}

/// Which filter a ranger builds for each beacon it tracks.
public enum RSSIFilterKind: Hashable, Sendable, CustomStringConvertible {
    /// No smoothing: the most recent sample.
    case latest
    /// AltBeacon's running average over a time window, trimmed of outliers
    /// (see ``RunningAverageRSSIFilter``).
    case runningAverage(window: Duration, maximumSampleCount: Int)
    /// AltBeacon's auto-regressive moving average (see ``ARMARSSIFilter``).
    case arma(speed: Double)

    /// The running average with AltBeacon's defaults: 20 s window.
    public static let runningAverage = RSSIFilterKind.runningAverage(
        window: RunningAverageRSSIFilter.defaultWindow,
        maximumSampleCount: RunningAverageRSSIFilter.defaultMaximumSampleCount)

    /// ARMA with AltBeacon's default speed 0.1.
    public static let arma = RSSIFilterKind.arma(speed: ARMARSSIFilter.defaultSpeed)

    /// A fresh, empty filter of this kind.
    public func makeFilter() -> AnyRSSIFilter { AnyRSSIFilter(self) }

    public var description: String {
        switch self {
        case .latest: return "raw"
        case .runningAverage(let window, _): return "running average \(window.secondsValue) s"
        case .arma(let speed): return "ARMA \(speed)"
        }
    }
}

/// A filter of any ``RSSIFilterKind``, chosen at run time from the configuration.
///
/// A struct holding one of three optional filters rather than an enum with payloads: optional
/// chaining mutates the held filter in place, so the running average's sample buffer is never
/// copied on `add` (an enum payload would be copied out, mutated and written back).
public struct AnyRSSIFilter: RSSIFilter, Hashable {
    public let kind: RSSIFilterKind
    private var latest: LatestRSSIFilter?
    private var runningAverage: RunningAverageRSSIFilter?
    private var arma: ARMARSSIFilter?

    public init(_ kind: RSSIFilterKind) {
        self.kind = kind
        switch kind {
        case .latest:
            latest = LatestRSSIFilter()
        case .runningAverage(let window, let maximumSampleCount):
            runningAverage = RunningAverageRSSIFilter(window: window, maximumSampleCount: maximumSampleCount)
        case .arma(let speed):
            arma = ARMARSSIFilter(speed: speed)
        }
    }

    public mutating func add(_ rssi: Int, at time: Timestamp) {
        latest?.add(rssi, at: time)
        runningAverage?.add(rssi, at: time)
        arma?.add(rssi, at: time)
    }

    public func smoothedRSSI(at now: Timestamp) -> Double? {
        if let latest { return latest.smoothedRSSI(at: now) }
        if let runningAverage { return runningAverage.smoothedRSSI(at: now) }
        return arma?.smoothedRSSI(at: now)
    }
}

/// No smoothing: reports the most recent sample. The baseline the other filters are measured against.
public struct LatestRSSIFilter: RSSIFilter, Hashable {
    public private(set) var latest: Int?

    public init() {}

    public mutating func add(_ rssi: Int, at time: Timestamp) { latest = rssi }

    public func smoothedRSSI(at now: Timestamp) -> Double? { latest.map(Double.init) }
}
