import BeaconKit
import Testing

@Suite("RegionMonitor restore after restart")
struct RegionMonitorRestoreTests {
    typealias Kit = MonitorTestKit
    let beacon = Kit.beacon(1, 1)

    @Test("restoring emits nothing and keeps state, region and last sighting")
    func silent() throws {
        var h = MonitorTestHarness()
        let a = try Kit.region("a")
        h.monitor.restore(a, for: "a", state: .inside, lastSeen: Kit.at(90), at: Kit.at(100))
        #expect(h.take().isEmpty)
        #expect(
            h.monitor.monitoredRegion(for: "a")
                == MonitoredRegion(region: a, state: .inside, lastSeen: Kit.at(90), lastDeterminedState: .inside))
        #expect(h.nextDeadline == 120)
    }

    @Test("a beacon still present after the restart produces no new didEnterRegion")
    func stillPresent() throws {
        var h = MonitorTestHarness()
        h.monitor.restore(try Kit.region("a"), for: "a", state: .inside, lastSeen: Kit.at(90), at: Kit.at(100))
        h.see(beacon, at: 101)
        h.advance(to: 130)
        #expect(h.take().isEmpty)
        #expect(h.monitor.state(of: "a") == .inside)
    }

    @Test("a beacon gone during the restart exits exactly once, at lastSeen + exitTimeout")
    func goneDuringRestart() throws {
        var h = MonitorTestHarness()
        h.monitor.restore(try Kit.region("a"), for: "a", state: .inside, lastSeen: Kit.at(10), at: Kit.at(100))
        #expect(h.nextDeadline == 40)
        h.advance(to: 100)
        h.advance(to: 1_000)
        #expect(h.take() == ["40.0 didDetermineState(outside) a", "40.0 didExitRegion a"])
    }

    @Test("a restored outside region waits for a sighting; a restored unknown one is outside exitTimeout later")
    func outsideAndUnknown() throws {
        var h = MonitorTestHarness()
        h.monitor.restore(try Kit.region("out", major: 1), for: "out", state: .outside, lastSeen: nil, at: Kit.at(100))
        h.monitor.restore(try Kit.region("unk", major: 2), for: "unk", state: .unknown, lastSeen: nil, at: Kit.at(100))
        #expect(h.nextDeadline == 130)
        h.advance(to: 130)
        h.see(Kit.beacon(1, 1), at: 140)
        #expect(
            h.take() == [
                "130.0 didDetermineState(outside) unk", "140.0 didDetermineState(inside) out", "140.0 didEnterRegion out",
            ])
    }

    @Test("an inside region restored without a last sighting counts as seen at the restore")
    func insideWithoutLastSeen() throws {
        var h = MonitorTestHarness()
        h.monitor.restore(try Kit.region("a"), for: "a", state: .inside, lastSeen: nil, at: Kit.at(100))
        #expect(h.monitor.lastSeen(of: "a") == Kit.at(100))
        #expect(h.nextDeadline == 130)
    }

    @Test("a snapshot round-trips, including a region inside before a suspension")
    func roundTrip() throws {
        var before = MonitorTestHarness()
        before.start(try Kit.region("a", major: 1), at: 0)
        before.start(try Kit.region("b", major: 2), at: 0)
        before.see(Kit.beacon(1, 1), at: 5)
        before.suspend(at: 10)
        let saved = before.monitor.regions
        #expect(saved["a"]?.lastDeterminedState == .inside)

        var after = MonitorTestHarness()
        for (key, region) in saved { after.monitor.restore(region, for: key, at: Kit.at(200)) }
        #expect(after.monitor.regions == saved)
        after.advance(to: 230)
        // "a" was entered and never exited: the client now hears the exit; "b" was never entered.
        #expect(
            after.take().sorted() == [
                "230.0 didDetermineState(outside) a", "230.0 didDetermineState(outside) b", "230.0 didExitRegion a",
            ])
    }

    @Test("restored while suspended with a last sighting long past: one exit, exitTimeout after resume, none before")
    func restoreWhileSuspendedStaleLastSeen() throws {
        // The daemon's restart: the saved last sighting may be older than exitTimeout (it is saved every few
        // seconds), yet the time beacond was down is blind time, so the exit waits for a full timeout of scanning.
        var h = MonitorTestHarness()
        h.suspend(at: 100)
        h.monitor.restore(try Kit.region("a"), for: "a", state: .inside, lastSeen: Kit.at(1), at: Kit.at(100))
        h.advance(to: 101)
        #expect(h.take().isEmpty)
        h.resume(at: 110)
        h.advance(to: 139)
        #expect(h.take().isEmpty)
        h.advance(to: 500)
        #expect(h.take() == ["140.0 didDetermineState(outside) a", "140.0 didExitRegion a"])
    }

    @Test("restoring while suspended leaves regions unknown until resume")
    func restoreWhileSuspended() throws {
        var h = MonitorTestHarness()
        h.suspend(at: 0)
        h.monitor.restore(try Kit.region("a"), for: "a", state: .inside, lastSeen: Kit.at(1), at: Kit.at(2))
        #expect(h.monitor.state(of: "a") == .unknown)
        #expect(h.monitor.monitoredRegion(for: "a")?.lastDeterminedState == .inside)
        #expect(h.nextDeadline == nil)
        h.resume(at: 10)
        h.see(beacon, at: 11)
        #expect(h.take() == ["11.0 didDetermineState(inside) a"])
    }
}

@Suite("RegionMonitor re-keying (a new client takes over a region)")
struct RegionMonitorRekeyTests {
    typealias Kit = MonitorTestKit

    @Test("an unknown region keeps its pending deadline: the takeover does not restart the exit timer")
    func unknownKeepsDeadline() throws {
        var h = MonitorTestHarness()
        h.suspend(at: 0)
        h.monitor.restore(try Kit.region("a"), for: "old", state: .inside, lastSeen: Kit.at(0), at: Kit.at(1))
        h.resume(at: 10)
        #expect(h.nextDeadline == 40)
        let moved = h.monitor.rekey("old", to: "new")
        #expect(moved)
        #expect(h.monitor.state(of: "old") == nil)
        #expect(h.nextDeadline == 40)
        h.advance(to: 100)
        #expect(h.take() == ["40.0 didDetermineState(outside) new", "40.0 didExitRegion new"])
    }

    @Test("an inside region keeps its state, last sighting and deadline, and replaces what the new key had")
    func insideReplaces() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a", major: 1), at: 0, key: "old")
        h.start(try Kit.region("b", major: 2), at: 0, key: "new")
        h.see(Kit.beacon(1, 1), at: 5)
        _ = h.take()
        let before = h.monitor.monitoredRegion(for: "old")
        let moved = h.monitor.rekey("old", to: "new")
        #expect(moved)
        #expect(h.monitor.count == 1)
        #expect(h.monitor.monitoredRegion(for: "new") == before)
        h.see(Kit.beacon(2, 1), at: 6)
        h.advance(to: 100)
        #expect(h.take() == ["35.0 didDetermineState(outside) new", "35.0 didExitRegion new"])
    }

    @Test("re-keying a key that is not monitored changes nothing")
    func missing() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0, key: "a")
        let moved = h.monitor.rekey("x", to: "a")
        #expect(!moved)
        #expect(h.monitor.count == 1)
    }
}
