#if canImport(Glibc)
    import Glibc
#endif
public import BeaconKit

/// How times are written for people: relative ("12 s ago") in tables, clock time in live streams.
public enum TimeText {
    /// "never" for 0 (the API's "never"), "just now" under a second (or a clock slightly ahead),
    /// then s, min, h, d.
    public static func relative(_ micros: Int64, now: Timestamp) -> String {
        guard micros != 0 else { return "never" }
        let seconds = (now.microsecondsSinceEpoch - micros) / 1_000_000
        switch seconds {
        case ..<1: return "just now"
        case ..<120: return "\(seconds) s ago"
        case ..<(120 * 60): return "\(seconds / 60) min ago"
        case ..<(48 * 3600): return "\(seconds / 3600) h ago"
        default: return "\(seconds / 86_400) d ago"
        }
    }

    /// A duration in the same words without "ago" ("3 h"), for uptime.
    public static func duration(seconds: Int64) -> String {
        switch seconds {
        case ..<120: return "\(max(0, seconds)) s"
        case ..<(120 * 60): return "\(seconds / 60) min"
        case ..<(48 * 3600): return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
        default: return "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h"
        }
    }

    /// `HH:MM:SS.mmm` at `utcOffset` seconds from UTC.
    public static func clock(_ time: Timestamp, utcOffset: Int64) -> String {
        let local = time.microsecondsSinceEpoch / 1000 + utcOffset * 1000
        var milliOfDay = local % 86_400_000
        if milliOfDay < 0 { milliOfDay += 86_400_000 }
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let hours = milliOfDay / 3_600_000, minutes = milliOfDay / 60_000 % 60
        let seconds = milliOfDay / 1000 % 60, millis = milliOfDay % 1000
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(millis, 3))"
    }

    /// This machine's offset from UTC at `time` (from the TZ database; 0 if it cannot be read).
    public static func localOffset(at time: Timestamp) -> Int64 {
        var seconds = time_t(time.microsecondsSinceEpoch / 1_000_000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 0 }
        return Int64(parts.tm_gmtoff)
    }

    /// Now, from the system clock.
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(microsecondsSinceEpoch: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000)
    }
}
