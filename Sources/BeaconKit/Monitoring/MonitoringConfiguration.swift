/// How region monitoring decides presence: how long silence lasts before an exit, and optionally which
/// signal strengths count.
public struct MonitoringConfiguration: Sendable, Hashable {
    /// How long a region stays inside after its last matching sighting, and how long a region stays unknown
    /// after monitoring starts (or detection resumes) before it is determined outside.
    public let exitTimeout: Duration
    /// Signal-strength thresholds against flapping at the edge of range; `nil` counts every sighting.
    public let hysteresis: RSSIHysteresis?
    /// Per-beacon exits learned from each beacon's rhythm, between `AdaptiveExit.minimum` and `exitTimeout`; `nil`
    /// exits every beacon `exitTimeout` after its last sighting.
    public let adaptiveExit: AdaptiveExit?

    /// The longest `exitTimeout` accepted: presence has no use for longer, and it keeps deadline arithmetic
    /// on microsecond timestamps far from overflow.
    public static let longestExitTimeout: Duration = .seconds(365 * 86_400)

    /// `exitTimeout` must be between one microsecond (the `Timestamp` resolution) and `longestExitTimeout`.
    /// An adaptive exit's minimum must not exceed `exitTimeout`.
    public init(exitTimeout: Duration = .seconds(30), hysteresis: RSSIHysteresis? = nil, adaptiveExit: AdaptiveExit? = nil)
        throws(MonitoringConfigurationError)
    {
        guard exitTimeout >= .microseconds(1), exitTimeout <= Self.longestExitTimeout else {
            throw .exitTimeoutOutOfRange(exitTimeout)
        }
        if let adaptiveExit, adaptiveExit.minimum > exitTimeout {
            throw .exitTimeoutMinimumAboveMaximum(minimum: adaptiveExit.minimum, maximum: exitTimeout)
        }
        self.exitTimeout = exitTimeout
        self.hysteresis = hysteresis
        self.adaptiveExit = adaptiveExit
    }

    private init(checkedExitTimeout: Duration) {
        self.exitTimeout = checkedExitTimeout
        self.hysteresis = nil
        self.adaptiveExit = nil
    }

    /// A 30 s exit timeout (the project's issue default; iOS also reports exits some seconds up to about
    /// 30 s after the last beacon was heard, so clients written for Core Location expect that delay) and
    /// no hysteresis.
    public static let `default` = MonitoringConfiguration(checkedExitTimeout: .seconds(30))
}

/// RSSI thresholds that keep a beacon at the edge of range from flapping a region in and out.
///
/// No peer offers this (Core Location and the Android Beacon Library count any sighting); Android Beacon
/// Library users ask for it. A sighting at or above `enterAtOrAbove` dBm counts fully: it can make a region
/// inside. One below `absentBelow` dBm does not count at all, as if the frame had not been heard. One in
/// between keeps an inside region inside but cannot enter one, so a beacon hovering around a single
/// threshold no longer produces an entry and exit each time it crosses it.
public struct RSSIHysteresis: Sendable, Hashable {
    public let enterAtOrAbove: Int
    public let absentBelow: Int

    /// `enterAtOrAbove` must be at least `absentBelow`: a sighting strong enough to enter cannot also count
    /// as absent. Equal values give a single threshold with no band.
    public init(enterAtOrAbove: Int, absentBelow: Int) throws(MonitoringConfigurationError) {
        guard enterAtOrAbove >= absentBelow else {
            throw .hysteresisInverted(enterAtOrAbove: enterAtOrAbove, absentBelow: absentBelow)
        }
        self.enterAtOrAbove = enterAtOrAbove
        self.absentBelow = absentBelow
    }
}

/// A monitoring configuration that cannot work, with the reason in words a user can act on.
public enum MonitoringConfigurationError: Error, Hashable, CustomStringConvertible {
    case exitTimeoutOutOfRange(Duration)
    case hysteresisInverted(enterAtOrAbove: Int, absentBelow: Int)
    case exitTimeoutMinimumOutOfRange(Duration)
    case exitTimeoutMinimumAboveMaximum(minimum: Duration, maximum: Duration)
    case exitChanceOutOfRange(Double)

    public var description: String {
        switch self {
        case .exitTimeoutOutOfRange(let timeout):
            return "exit timeout \(timeout) is out of range: give at least 1 µs and at most "
                + "\(MonitoringConfiguration.longestExitTimeout)"
        case .hysteresisInverted(let enter, let absent):
            return "RSSI hysteresis needs enter-at-or-above (\(enter) dBm) >= absent-below (\(absent) dBm): "
                + "a sighting strong enough to enter a region cannot also count as absent"
        case .exitTimeoutMinimumOutOfRange(let minimum):
            return "exit_timeout_min \(minimum) is out of range: give at least 0.1 s (e.g. exit_timeout_min = 3)"
        case .exitTimeoutMinimumAboveMaximum(let minimum, let maximum):
            return "exit_timeout_min (\(minimum)) is longer than exit_timeout (\(maximum)): adaptive exits fall between "
                + "the two, so give exit_timeout_min <= exit_timeout (e.g. exit_timeout_min = 3, exit_timeout = 180)"
        case .exitChanceOutOfRange(let chance):
            return "exit_chance \(chance) is out of range: give a probability from 1e-12 to 0.5 (e.g. exit_chance = 0.001: "
                + "the chance per hour that a present beacon is wrongly exited)"
        }
    }
}
