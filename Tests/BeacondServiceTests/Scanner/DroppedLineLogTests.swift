import BeacondService
import BeacondCore
import Testing

/// A flood of bad FIFO lines is logged a bounded number of times, and every line is counted.
@Suite("Dropped line log")
struct DroppedLineLogTests {
    @Test func logsTheFirstOnesThenOneSummaryAnInterval() {
        var log = DroppedLineLog(individually: 3, interval: .seconds(60))
        let start = ContinuousClock.now
        #expect(log.record("a", at: start) == "a")
        #expect(log.record("b", at: start) == "b")
        #expect(log.record("c", at: start)?.contains("at most once a minute") == true)
        for _ in 0..<1000 { #expect(log.record("x", at: start.advanced(by: .seconds(30))) == nil) }
        let summary = log.record("late", at: start.advanced(by: .seconds(61)))
        #expect(summary?.hasPrefix("late") == true)
        #expect(summary?.contains("1000 other dropped lines not logged") == true, "\(summary ?? "")")
        #expect(summary?.contains("1004 dropped in all") == true, "\(summary ?? "")")
        #expect(log.record("y", at: start.advanced(by: .seconds(62))) == nil)
        #expect(log.dropped == 1005)
    }
}
