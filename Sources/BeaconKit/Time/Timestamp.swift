/// A point in time as microseconds since the Unix epoch (UTC).
///
/// The engine never reads a clock itself: every call that depends on time takes a
/// `Timestamp`, so replay can run on a capture's own clock and tests are instant.
/// Microseconds match what the D-Bus API exposes (`Timestamp t`).
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microsecondsSinceEpoch: Int64

    @inlinable
    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    public init(secondsSinceEpoch seconds: Double) {
        self.microsecondsSinceEpoch = Int64((seconds * 1_000_000).rounded())
    }

    public static let epoch = Timestamp(microsecondsSinceEpoch: 0)

    @inlinable
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microsecondsSinceEpoch < rhs.microsecondsSinceEpoch
    }

    @inlinable
    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: lhs.microsecondsSinceEpoch + rhs.wholeMicroseconds)
    }

    @inlinable
    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: lhs.microsecondsSinceEpoch - rhs.wholeMicroseconds)
    }

    /// The time from `rhs` to `lhs`.
    @inlinable
    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        .microseconds(lhs.microsecondsSinceEpoch - rhs.microsecondsSinceEpoch)
    }

    public var secondsSinceEpoch: Double { Double(microsecondsSinceEpoch) / 1_000_000 }

    /// `2021-02-01T03:27:59.789349Z`: RFC 3339 in UTC with microseconds, computed without
    /// Foundation's formatters (they are slow and locale-sensitive).
    public var iso8601: String {
        let micros = microsecondsSinceEpoch
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = Timestamp.civilDate(daysSinceEpoch: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
            + ".\(pad(fraction, 6))Z"
    }

    public var description: String { iso8601 }

    /// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
    static func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}

extension Duration {
    /// Whole microseconds, truncated toward zero.
    @inlinable
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// Seconds as a `Double`, for filters and reports.
    @inlinable
    public var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Where the daemon gets "now" from. Pure code takes timestamps, not clocks; this protocol is
/// for the layers that drive it (the daemon uses the system clock, replay the capture's clock).
public protocol BeaconClock: Sendable {
    func now() -> Timestamp
}
