public import BeaconKit

/// Plays a capture in real time by its own timestamps, measured from its first record: each record is due as
/// long after the first as it was recorded after it. One silent stretch is capped at `longestWait`, so a corrupt
/// timestamp (a year ahead) cannot stall a replay; later records shift by the difference. Used by `beacond
/// replay --realtime` and by the daemon's `replay:` scanner, so both pace alike.
public struct CapturePacer: Sendable {
    public let longestWait: Duration
    private var origin: (wall: ContinuousClock.Instant, capture: Timestamp)?

    public init(longestWait: Duration) {
        self.longestWait = longestWait
    }

    /// When the record stamped `stamp` is due, if it is read at `now`. A record stamped before the first is due
    /// at once.
    public mutating func due(for stamp: Timestamp, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let start = origin ?? (wall: now, capture: stamp)
        let offset = stamp - start.capture
        var due = start.wall + max(offset, .zero)
        if due - now > longestWait {
            due = now + longestWait
            origin = (wall: due - offset, capture: start.capture)
        } else {
            origin = start
        }
        return due
    }
}
