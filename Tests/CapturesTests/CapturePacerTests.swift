import BeaconKit
import Captures
import Testing

/// Real-time pacing by a capture's own timestamps, with a fixed "now" so nothing waits.
@Suite("capture pacer")
struct CapturePacerTests {
    static let first = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)

    /// Records are due as long after the first as they were recorded after it, however late they are read.
    @Test func recordsAreDueByTheirOffsetFromTheFirst() {
        var pacer = CapturePacer(longestWait: .seconds(10))
        let now = ContinuousClock.now
        #expect(pacer.due(for: Self.first, now: now) == now)
        #expect(pacer.due(for: Self.first + .milliseconds(250), now: now + .milliseconds(5)) == now + .milliseconds(250))
        #expect(pacer.due(for: Self.first + .seconds(2), now: now + .seconds(3)) == now + .seconds(2))
        // Stamped before the first: due at once (at the start), never before it.
        #expect(pacer.due(for: Self.first - .seconds(1), now: now + .seconds(3)) == now)
    }

    /// A silent stretch longer than the cap waits only the cap, and the records after it keep their spacing.
    @Test func aLongSilenceIsCappedAndLaterRecordsShift() {
        var pacer = CapturePacer(longestWait: .seconds(10))
        let now = ContinuousClock.now
        _ = pacer.due(for: Self.first, now: now)
        let yearAhead = Self.first + .seconds(365 * 24 * 3600)
        let capped = pacer.due(for: yearAhead, now: now + .seconds(1))
        #expect(capped == now + .seconds(11))
        #expect(pacer.due(for: yearAhead + .milliseconds(100), now: capped) == capped + .milliseconds(100))
    }
}
