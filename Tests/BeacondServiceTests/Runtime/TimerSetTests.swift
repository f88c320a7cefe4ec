@testable import BeacondService
@testable import BeacondCore
import MainLoopKit
import TestKit
import Testing

@Suite("timer set: one timer per name")
struct TimerSetTests {
    @Test("arming a name again replaces its timer; a fired or cancelled name is no longer armed")
    func bookkeeping() throws {
        let loop = try MainLoop()
        var timers = TimerSet<DaemonTimer>(loop: loop)
        let start = ContinuousClock.now + .seconds(3600)
        timers.arm(.engine, at: start) {}
        timers.arm(.engine, at: start + .seconds(1)) {}
        #expect(timers.isArmed(.engine) && !timers.isArmed(.queueExpiry))
        timers.arm(.queueExpiry, at: start) {}
        timers.fired(.engine)
        #expect(!timers.isArmed(.engine))
        timers.cancel(.queueExpiry)
        #expect(!timers.isArmed(.queueExpiry))
        for timer in DaemonTimer.allCases { timers.arm(timer, at: start) {} }
        timers.cancelAll()
        #expect(DaemonTimer.allCases.allSatisfy { !timers.isArmed($0) })
    }

    @Test("only the last arming of a name fires, once; a cancelled one never does")
    func firing() throws {
        let loop = try MainLoop()
        try loop.startThread()
        defer { loop.stopAndWait() }
        let fired = Locked<[String]>([])
        try loop.onThread {
            var timers = TimerSet<DaemonTimer>(loop: loop)
            timers.arm(.engine, at: .now + .milliseconds(50)) { fired.withLock { $0.append("first") } }
            timers.arm(.engine, at: .now + .milliseconds(60)) { fired.withLock { $0.append("second") } }
            timers.arm(.stateRetry, at: .now + .milliseconds(10)) { fired.withLock { $0.append("cancelled") } }
            timers.cancel(.stateRetry)
            // Due after all of them: the loop fires timers in deadline order, so once it has fired, a timer wrongly
            // kept would have fired before it (no sleep that a busy machine could outlast).
            timers.arm(.queueExpiry, at: .now + .milliseconds(150)) { fired.withLock { $0.append("sentinel") } }
        }
        #expect(eventually { fired.withLock { $0 }.contains("sentinel") })
        #expect(fired.withLock { $0 } == ["second", "sentinel"])
    }
}
