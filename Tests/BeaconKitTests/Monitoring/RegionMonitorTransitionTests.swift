import BeaconKit
import Testing

@Suite("RegionMonitor transitions")
struct RegionMonitorTransitionTests {
    typealias Kit = MonitorTestKit
    let beacon = Kit.beacon(1, 1)

    /// Region "a" (all of UUID A) started at 0 s and entered by a sighting at `seconds`; events taken.
    func entered(at seconds: Double) throws -> MonitorTestHarness {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0)
        h.see(beacon, at: seconds)
        _ = h.take()
        return h
    }

    @Test("start emits didStartMonitoring and leaves the region unknown")
    func startIsUnknown() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 5)
        #expect(h.take() == ["5.0 didStartMonitoring a"])
        #expect(h.monitor.state(of: "a") == .unknown)
        #expect(h.monitor.lastSeen(of: "a") == nil)
        #expect(h.nextDeadline == 35)
    }

    @Test(
        "entry and exit notifications follow notifyOnEntry and notifyOnExit",
        arguments: [(true, true), (true, false), (false, true), (false, false)])
    func notifyFlags(entry: Bool, exit: Bool) throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a", entry: entry, exit: exit), at: 0)
        h.see(beacon, at: 1)
        h.see(beacon, at: 2)
        h.advance(to: 100)
        var expected = ["0.0 didStartMonitoring a", "1.0 didDetermineState(inside) a"]
        if entry { expected.append("1.0 didEnterRegion a") }
        expected.append("32.0 didDetermineState(outside) a")
        if exit { expected.append("32.0 didExitRegion a") }
        #expect(h.take() == expected)
        #expect(h.monitor.state(of: "a") == .outside)
    }

    @Test("a region never seen becomes outside exitTimeout after start, without didExitRegion")
    func unknownBecomesOutside() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0)
        h.advance(to: 29.999_999)
        #expect(h.take() == ["0.0 didStartMonitoring a"])
        #expect(h.monitor.state(of: "a") == .unknown)
        h.advance(to: 30)
        #expect(h.take() == ["30.0 didDetermineState(outside) a"])
        #expect(h.nextDeadline == nil)
        h.see(beacon, at: 40)
        #expect(h.take() == ["40.0 didDetermineState(inside) a", "40.0 didEnterRegion a"])
    }

    @Test("outside → inside → outside repeats with an entry and an exit each time")
    func reentry() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0)
        h.see(beacon, at: 0)
        h.see(beacon, at: 100)
        h.advance(to: 200)
        #expect(
            h.take() == [
                "0.0 didStartMonitoring a", "0.0 didDetermineState(inside) a", "0.0 didEnterRegion a",
                "30.0 didDetermineState(outside) a", "30.0 didExitRegion a",
                "100.0 didDetermineState(inside) a", "100.0 didEnterRegion a",
                "130.0 didDetermineState(outside) a", "130.0 didExitRegion a",
            ])
    }

    @Test("an exit is stamped last sighting + exitTimeout to the microsecond, however late advance runs")
    func exitTimedExactly() throws {
        var h = try entered(at: 3)
        h.see(beacon, at: 10.000_001)
        #expect(h.nextDeadline == 40.000_001)
        h.advance(to: 40)
        #expect(h.monitor.state(of: "a") == .inside)
        h.advance(to: 5_000)
        #expect(Array(h.take().suffix(2)) == ["40.000001 didDetermineState(outside) a", "40.000001 didExitRegion a"])
        #expect(h.monitor.lastSeen(of: "a") == Kit.at(10.000_001))
    }

    @Test("a sighting just inside exitTimeout refreshes; one exactly at it is too late: exit, then entry")
    func sightingAtTheDeadline() throws {
        var h = try entered(at: 0)
        h.see(beacon, at: 29.999_999)
        #expect(h.take().isEmpty)
        #expect(h.nextDeadline == 59.999_999)
        // observe fires what is due at its own time before counting the sighting.
        h.see(beacon, at: 59.999_999)
        #expect(
            h.take() == [
                "59.999999 didDetermineState(outside) a", "59.999999 didExitRegion a",
                "59.999999 didDetermineState(inside) a", "59.999999 didEnterRegion a",
            ])
    }

    @Test("starting a key again replaces the region and resets it to unknown")
    func replacement() throws {
        var h = try entered(at: 1)
        let replacement = try Kit.region("a", major: 2)
        h.monitor.startMonitoring(replacement, for: "a", at: Kit.at(10), into: &h.pending)
        #expect(h.take() == ["10.0 didStartMonitoring a"])
        #expect(h.monitor.state(of: "a") == .unknown)
        #expect(h.monitor.lastSeen(of: "a") == nil)
        #expect(h.monitor.region(for: "a") == replacement)
        #expect(h.monitor.count == 1)
        // The old constraint no longer matches, and the old exit (due at 31) never fires.
        h.see(beacon, at: 20)
        h.advance(to: 39.999)
        #expect(h.take().isEmpty)
        h.advance(to: 40)
        #expect(h.take() == ["40.0 didDetermineState(outside) a"])
    }

    @Test("replacing a region whose beacon is present enters it afresh")
    func replacementReenters() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0)
        h.see(beacon, at: 1)
        h.start(try Kit.region("a"), at: 2)
        _ = h.take()
        h.see(beacon, at: 3)
        #expect(h.take() == ["3.0 didDetermineState(inside) a", "3.0 didEnterRegion a"])
    }

    @Test("stop removes the region silently and cancels its pending transition")
    func stop() throws {
        var h = try entered(at: 1)
        #expect(h.stop("a", at: 30)?.identifier == "a")
        #expect(h.stop("a", at: 30) == nil)
        #expect(h.monitor.count == 0)
        #expect(h.nextDeadline == nil)
        h.see(beacon, at: 2)
        h.advance(to: 100)
        #expect(h.take().isEmpty)
        #expect(h.monitor.state(of: "a") == nil)
        #expect(h.requestState("a", at: 101) == nil)
        #expect(h.take().isEmpty)
    }

    @Test("stop first fires what was due before it")
    func stopFiresDueFirst() throws {
        var h = try entered(at: 1)
        h.stop("a", at: 31)
        #expect(h.take() == ["31.0 didDetermineState(outside) a", "31.0 didExitRegion a"])
    }

    @Test("requestState reports the current state, after firing what is due by then")
    func requestState() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0)
        #expect(h.requestState("a", at: 1) == .unknown)
        h.see(beacon, at: 2)
        #expect(h.requestState("a", at: 3) == .inside)
        _ = h.take()
        #expect(h.requestState("a", at: 45) == .outside)
        #expect(
            h.take() == [
                "32.0 didDetermineState(outside) a", "32.0 didExitRegion a", "45.0 didDetermineState(outside) a",
            ])
    }

    @Test("identity is UUID/major/minor only: two addresses with one identity are one beacon")
    func addressIgnored() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a", major: 1, minor: 1), at: 0)
        // Two transmitters (or one rotating its address) alternate, each silent longer than exitTimeout.
        for step in 0..<10 {
            h.see(beacon, at: Double(step) * 20, address: step.isMultiple(of: 2) ? 0x1111 : 0x2222)
        }
        h.advance(to: 209.9)
        #expect(h.take() == ["0.0 didStartMonitoring a", "0.0 didDetermineState(inside) a", "0.0 didEnterRegion a"])
        h.advance(to: 210)
        #expect(h.take() == ["210.0 didDetermineState(outside) a", "210.0 didExitRegion a"])
    }

    @Test("other beacons do not match")
    func otherBeaconsIgnored() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a", major: 1, minor: 1), at: 0)
        h.see(Kit.beacon(1, 2), at: 1)
        h.see(Kit.beacon(2, 1), at: 2)
        h.see(Kit.beacon(Kit.uuidB, 1, 1), at: 3)
        #expect(h.monitor.state(of: "a") == .unknown)
    }

    @Test("time never runs backwards: a late sighting counts at the latest time seen")
    func lateSighting() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0)
        h.advance(to: 20)
        h.see(beacon, at: 5)
        #expect(Array(h.take().suffix(2)) == ["20.0 didDetermineState(inside) a", "20.0 didEnterRegion a"])
        #expect(h.monitor.lastSeen(of: "a") == Kit.at(20))
        #expect(h.nextDeadline == 50)
    }

    @Test("simultaneous transitions come in start order, and events in time order")
    func eventOrder() throws {
        var h = MonitorTestHarness()
        for name in ["c", "a", "b"] { h.start(try Kit.region(name), at: 0) }
        h.start(try Kit.region("d", major: 9), at: 5)
        h.see(beacon, at: 10)
        h.advance(to: 100)
        #expect(
            h.take() == [
                "0.0 didStartMonitoring c", "0.0 didStartMonitoring a", "0.0 didStartMonitoring b",
                "5.0 didStartMonitoring d",
                "10.0 didDetermineState(inside) c", "10.0 didEnterRegion c",
                "10.0 didDetermineState(inside) a", "10.0 didEnterRegion a",
                "10.0 didDetermineState(inside) b", "10.0 didEnterRegion b",
                "35.0 didDetermineState(outside) d",
                "40.0 didDetermineState(outside) c", "40.0 didExitRegion c",
                "40.0 didDetermineState(outside) a", "40.0 didExitRegion a",
                "40.0 didDetermineState(outside) b", "40.0 didExitRegion b",
            ])
    }

    @Test("queries report regions, states and last sightings")
    func queries() throws {
        var h = MonitorTestHarness()
        let a = try Kit.region("a", major: 1)
        let b = try Kit.region("b", Kit.uuidB)
        h.start(a, at: 0)
        h.start(b, at: 0)
        h.see(beacon, at: 4)
        #expect(h.monitor.count == 2)
        #expect(h.monitor.region(for: "a") == a)
        #expect(h.monitor.region(for: "zz") == nil)
        #expect(
            h.monitor.regions == [
                "a": MonitoredRegion(region: a, state: .inside, lastSeen: Kit.at(4), lastDeterminedState: .inside),
                "b": MonitoredRegion(region: b, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown),
            ])
        #expect(h.monitor.monitoredRegion(for: "a") == h.monitor.regions["a"])
        #expect(h.nextDeadline == 30)
    }

    @Test("nextDeadline is always the earliest pending transition")
    func nextDeadline() throws {
        var h = MonitorTestHarness()
        #expect(h.nextDeadline == nil)
        h.start(try Kit.region("a", major: 1), at: 0)
        h.start(try Kit.region("b", major: 2), at: 10)
        #expect(h.nextDeadline == 30)
        h.see(Kit.beacon(1, 7), at: 20)
        #expect(h.nextDeadline == 40)
        h.see(Kit.beacon(1, 7), at: 25)
        #expect(h.nextDeadline == 40)
        h.advance(to: 40)
        #expect(h.nextDeadline == 55)
        h.see(Kit.beacon(1, 7), at: 50)
        #expect(h.nextDeadline == 80)
        h.advance(to: 80)
        #expect(h.nextDeadline == nil)
    }
}
