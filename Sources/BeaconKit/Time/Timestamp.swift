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

    /// Non-finite or out-of-range values clamp to the representable range (never a trap).
    public init(secondsSinceEpoch seconds: Double) {
        let micros = (seconds * 1_000_000).rounded()
        if micros.isNaN {
            self.microsecondsSinceEpoch = 0
        } else if micros >= 9.2e18 {
            self.microsecondsSinceEpoch = .max
        } else if micros <= -9.2e18 {
            self.microsecondsSinceEpoch = .min
        } else {
            self.microsecondsSinceEpoch = Int64(micros)
        }
    }

    public static let epoch = Timestamp(microsecondsSinceEpoch: 0)

    @inlinable
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microsecondsSinceEpoch < rhs.microsecondsSinceEpoch
    }

    // Arithmetic saturates: timestamps come from capture files and the kernel, and a corrupt one
    // (year 292,000) must clamp, not trap.

    @inlinable
    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(
            microsecondsSinceEpoch: saturating(
                lhs.microsecondsSinceEpoch.addingReportingOverflow(rhs.wholeMicroseconds),
                positive: rhs.wholeMicroseconds > 0))
    }

    @inlinable
    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(
            microsecondsSinceEpoch: saturating(
                lhs.microsecondsSinceEpoch.subtractingReportingOverflow(rhs.wholeMicroseconds),
                positive: rhs.wholeMicroseconds < 0))
    }

    /// The time from `rhs` to `lhs`.
    @inlinable
    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        let difference = lhs.microsecondsSinceEpoch.subtractingReportingOverflow(rhs.microsecondsSinceEpoch)
        return .microseconds(saturating(difference, positive: lhs > rhs))
    }

    @inlinable
    static func saturating(_ result: (partialValue: Int64, overflow: Bool), positive: Bool) -> Int64 {
        guard result.overflow else { return result.partialValue }
        return positive ? .max : .min
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
    /// Saturates at `Int64.min`/`.max` for durations beyond ±292,000 years.
    @inlinable
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (total, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        if overflowAgain { return seconds > 0 ? .max : .min }
        return total
    }

    /// Seconds as a `Double`, for filters and reports.
    @inlinable
    public var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
