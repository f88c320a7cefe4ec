public import BeaconKit
import Foundation
import BeacondCore

/// The engine's clock: wall time read once at start, advanced by CLOCK_BOOTTIME. Exit timeouts and ranging
/// cycles must not jump when the wall clock is stepped (NTP at boot on a board without an RTC would otherwise
/// exit every region at once, or freeze them for as long as the step back); timestamps sent to clients stay
/// close to wall time, and still count while the machine sleeps.
public enum WallClock {
    public static let now: @Sendable () -> Timestamp = {
        let elapsed = microseconds(CLOCK_BOOTTIME) - startBoot
        return Timestamp(microsecondsSinceEpoch: startWall &+ elapsed)
    }

    static func microseconds(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    static let startWall = microseconds(CLOCK_REALTIME)
    static let startBoot = microseconds(CLOCK_BOOTTIME)
}
