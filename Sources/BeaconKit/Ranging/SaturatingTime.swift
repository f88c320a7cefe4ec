/// Time arithmetic for ranging that saturates instead of trapping: timestamps come from captures and
/// controllers, and a corrupt one (year −290,000) must not crash the daemon through an overflow.
extension Timestamp {
    /// Microseconds from `earlier` to `self`, clamped to the `Int64` range.
    func saturatingMicroseconds(since earlier: Timestamp) -> Int64 {
        let (difference, overflow) = microsecondsSinceEpoch.subtractingReportingOverflow(earlier.microsecondsSinceEpoch)
        if !overflow { return difference }
        return earlier.microsecondsSinceEpoch > 0 ? .min : .max
    }
}

extension Duration {
    /// Whole microseconds, clamped to the `Int64` range (configurations may say "forever").
    var saturatingMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, carry) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        if carry { return seconds < 0 ? .min : .max }
        return total
    }
}
