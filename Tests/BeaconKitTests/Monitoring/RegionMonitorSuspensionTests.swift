import BeaconKit
import Testing

@Suite("RegionMonitor detection suspension")
struct RegionMonitorSuspensionTests {
    typealias Kit = MonitorTestKit

    /// Regions "in" (seen, inside), "out" (seen then gone, outside) and "never" (still unknown) at 50 s.
    func harness() throws -> MonitorTestHarness {
        var h = MonitorTestHarness()
        h.start(try Kit.region("in", major: 1), at: 0)
        h.start(try Kit.region("out", major: 2), at: 0)
        h.see(Kit.beacon(1, 1), at: 0)
        h.see(Kit.beacon(2, 1), at: 0)
        h.see(Kit.beacon(1, 1), at: 20)
        h.advance(to: 29)
        h.start(try Kit.region("never", major: 3), at: 29)
        h.see(Kit.beacon(1, 1), at: 40)
        h.advance(to: 50)
        #expect(h.monitor.state(of: "in") == .inside)
        #expect(h.monitor.state(of: "out") == .outside)
        #expect(h.monitor.state(of: "never") == .unknown)
        _ = h.take()
        return h
    }

    /// `harness()` suspended at 55 s and resumed at 500 s, events taken.
    func resumed() throws -> MonitorTestHarness {
        var h = try harness()
        h.suspend(at: 55)
        h.resume(at: 500)
        _ = h.take()
        return h
    }

    @Test("suspending makes every determined region unknown, in start order, and invents no exits")
    func suspend() throws {
        var h = try harness()
        h.suspend(at: 55)
        #expect(h.take() == ["55.0 didDetermineState(unknown) in", "55.0 didDetermineState(unknown) out"])
        #expect(h.monitor.isDetectionSuspended)
        #expect(h.nextDeadline == nil)
        h.see(Kit.beacon(2, 1), at: 60)
        h.advance(to: 10_000)
        h.suspend(at: 10_001)
        #expect(h.take().isEmpty)
        #expect(h.monitor.regions.values.allSatisfy { $0.state == .unknown })
        #expect(h.requestState("in", at: 10_002) == .unknown)
    }

    @Test("suspending fires what was due before the adapter vanished")
    func suspendFiresDueFirst() throws {
        var h = try harness()
        h.suspend(at: 100)
        #expect(
            h.take() == [
                "59.0 didDetermineState(outside) never",
                "70.0 didDetermineState(outside) in", "70.0 didExitRegion in",
                "100.0 didDetermineState(unknown) in", "100.0 didDetermineState(unknown) out",
                "100.0 didDetermineState(unknown) never",
            ])
    }

    @Test("after resume, a region inside before and seen again is inside without a second didEnterRegion")
    func resumeReseenInside() throws {
        var h = try resumed()
        #expect(h.nextDeadline == 530)
        h.see(Kit.beacon(1, 9), at: 510)
        #expect(h.take() == ["510.0 didDetermineState(inside) in"])
    }

    @Test("after resume, a region outside before and seen is entered")
    func resumeSeenOutside() throws {
        var h = try resumed()
        h.see(Kit.beacon(2, 9), at: 510)
        #expect(h.take() == ["510.0 didDetermineState(inside) out", "510.0 didEnterRegion out"])
    }

    @Test("after resume, unseen regions become outside exitTimeout later; only one the client heard enter exits")
    func resumeUnseen() throws {
        var h = try resumed()
        h.advance(to: 529.9)
        #expect(h.take().isEmpty)
        h.advance(to: 530)
        #expect(
            h.take() == [
                "530.0 didDetermineState(outside) in", "530.0 didExitRegion in",
                "530.0 didDetermineState(outside) out",
                "530.0 didDetermineState(outside) never",
            ])
    }

    @Test("a region started while suspended waits for resume, and never-entered rules apply")
    func startWhileSuspended() throws {
        var h = MonitorTestHarness()
        h.suspend(at: 0)
        h.start(try Kit.region("a"), at: 1)
        #expect(h.nextDeadline == nil)
        h.see(Kit.beacon(1, 1), at: 2)
        #expect(h.monitor.state(of: "a") == .unknown)
        h.resume(at: 100)
        #expect(h.nextDeadline == 130)
        h.advance(to: 130)
        #expect(h.take() == ["1.0 didStartMonitoring a", "130.0 didDetermineState(outside) a"])
    }

    @Test("resume without suspension and repeated resume change nothing")
    func resumeIdempotent() throws {
        var h = try harness()
        h.resume(at: 60)
        #expect(h.nextDeadline == 59)
        h.suspend(at: 61)
        h.resume(at: 62)
        h.resume(at: 80)
        #expect(h.nextDeadline == 92)
    }
}
