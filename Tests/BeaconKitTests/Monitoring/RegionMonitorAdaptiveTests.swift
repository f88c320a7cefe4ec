@testable import BeaconKit
import Testing

@Suite("RegionMonitor adaptive exits, EntryDelay, ExitDelay and rooms")
struct RegionMonitorAdaptiveTests {
    typealias Kit = MonitorTestKit
    let beacon = Kit.beacon(1, 1)
    let other = Kit.beacon(1, 2)

    /// Exits learned between 2 s and 180 s, at most one false exit per beacon in 1,000 hours.
    func adaptive() throws -> MonitorTestHarness {
        MonitorTestHarness(
            try MonitoringConfiguration(
                exitTimeout: .seconds(180),
                adaptiveExit: AdaptiveExit(minimum: .seconds(2), chance: 1e-3)))
    }

    @Test("a 10 Hz tag heard every time exits seconds after it falls silent, not after exit_timeout")
    func fastTagExitsFast() throws {
        var h = try adaptive()
        h.start(try Kit.region("a", major: 1, minor: 1), at: 0)
        var time = 1.0
        while time < 20 {
            h.see(beacon, at: time)
            time += 0.1
        }
        _ = h.take()
        let last = time - 0.1
        h.advance(to: last + 170)
        let exit = try #require(h.take().first { $0.hasSuffix("didExitRegion a") })
        let at = try #require(Double(exit.split(separator: " ")[0]))
        #expect(at - last >= 2 && at - last < 5, "exit \(at - last) s after the last sighting")
    }

    @Test("a tag advertising every 30 s is not exited after 30 s of silence, and still exits by exit_timeout")
    func slowTagIsNotExitedEarly() throws {
        var h = try adaptive()
        h.start(try Kit.region("a", major: 1, minor: 1), at: 0)
        for n in 0..<12 { h.see(beacon, at: 1 + 30 * Double(n)) }
        _ = h.take()
        // Last sighting at 331 s: nothing at 361 s (30 s) or 391 s (60 s).
        h.advance(to: 392)
        #expect(h.take().isEmpty)
        #expect(h.monitor.state(of: "a") == .inside)
        h.advance(to: 331 + 180)
        #expect(h.take().contains("511.0 didExitRegion a"))
    }

    @Test("before a beacon's rhythm is learned, it gets the full exit_timeout")
    func unlearnedGetsMaximum() throws {
        var h = try adaptive()
        h.start(try Kit.region("a", major: 1, minor: 1), at: 0)
        h.see(beacon, at: 1)
        h.see(beacon, at: 2)
        _ = h.take()
        h.advance(to: 181)
        #expect(h.take().isEmpty)
        h.advance(to: 182)
        #expect(h.take() == ["182.0 didDetermineState(outside) a", "182.0 didExitRegion a"])
    }

    @Test("a fast beacon's short exit never cuts short a slow beacon of the same region")
    func sharedRegionKeepsLongerDeadline() throws {
        var h = try adaptive()
        h.start(try Kit.region("a", major: 1), at: 0)
        // `other` advertises every 20 s, `beacon` every 0.1 s, both learned.
        for n in 0..<9 { h.see(other, at: 1 + 20 * Double(n)) }
        var time = 165.0
        while time < 182 {
            h.see(beacon, at: time)
            time += 0.1
        }
        _ = h.take()
        // The slow one was last heard at 161 s, the fast one leaves at 182 s: the slow one's learned silence (well
        // over 20 s) holds the region past the fast one's few seconds.
        h.advance(to: 200)
        #expect(h.take().isEmpty)
        #expect(h.monitor.state(of: "a") == .inside)
    }

    @Test("ExitDelay overrides the monitor's exit for its region only")
    func exitDelay() throws {
        var h = MonitorTestHarness()
        var quick = try Kit.region("quick", major: 1, minor: 1)
        quick.exitDelay = .seconds(5)
        h.start(quick, at: 0)
        h.start(try Kit.region("plain", major: 1, minor: 1), at: 0)
        _ = h.take()
        h.see(beacon, at: 1)
        _ = h.take()
        h.advance(to: 31)
        #expect(
            h.take() == [
                "6.0 didDetermineState(outside) quick", "6.0 didExitRegion quick",
                "31.0 didDetermineState(outside) plain", "31.0 didExitRegion plain",
            ])
    }

    @Test("EntryDelay: entered only after the beacon was heard, unbroken, that long; a silence restarts the wait")
    func entryDelay() throws {
        var h = MonitorTestHarness()
        var region = try Kit.region("a", major: 1, minor: 1)
        region.entryDelay = .seconds(10)
        h.start(region, at: 0)
        _ = h.take()
        h.see(beacon, at: 1)
        h.see(beacon, at: 5)
        #expect(h.take().isEmpty)
        // A 40 s silence (longer than the 30 s exit) breaks the run.
        h.see(beacon, at: 45)
        _ = h.take() // the unknown → outside determination at 30 s
        h.see(beacon, at: 50)
        #expect(h.take().isEmpty)
        h.see(beacon, at: 55)
        #expect(h.take() == ["55.0 didDetermineState(inside) a", "55.0 didEnterRegion a"])
    }

    @Test("a region with a room counts only sightings placed in that room; unknown keeps it inside and enters nothing")
    func roomRegion() throws {
        var h = MonitorTestHarness()
        var kitchen = try Kit.region("kitchen", major: 1, minor: 1)
        kitchen.room = "kitchen"
        h.start(kitchen, at: 0)
        _ = h.take()
        func see(_ room: SightingRoom, at seconds: Double) {
            var events: [MonitoringEvent<String>] = []
            h.monitor.observe(beacon, rssi: -60, by: ReceiverID(rawValue: 1), room: room, at: Kit.at(seconds), into: &events)
            h.pending += events
        }
        see(.room("hall"), at: 1)
        see(.unplaced, at: 2)
        see(.unknown, at: 3)
        #expect(h.take().isEmpty)
        see(.room("kitchen"), at: 4)
        #expect(h.take() == ["4.0 didDetermineState(inside) kitchen", "4.0 didEnterRegion kitchen"])
        // Its room cannot be said for a minute: heard all along, so it stays inside.
        for second in stride(from: 5.0, through: 65, by: 5) { see(.unknown, at: second) }
        #expect(h.take().isEmpty)
        // In the hall from 70 s: the kitchen is left 30 s after the last sighting that counted.
        for second in stride(from: 70.0, through: 100, by: 5) { see(.room("hall"), at: second) }
        #expect(h.take() == ["95.0 didDetermineState(outside) kitchen", "95.0 didExitRegion kitchen"])
    }

    @Test("the monitor keeps few deadline lists: adaptive exits are rounded up to 8 steps per octave")
    func roundedExits() {
        #expect(RegionMonitor<String>.roundedUp(2_000_000, atMost: 180_000_000) == 2_097_152)
        #expect(RegionMonitor<String>.roundedUp(2_097_152, atMost: 180_000_000) == 2_097_152)
        #expect(RegionMonitor<String>.roundedUp(179_000_000, atMost: 180_000_000) == 180_000_000)
    }

    @Test("adaptive exit settings that cannot work are refused with the fix")
    func invalidSettings() throws {
        #expect(throws: MonitoringConfigurationError.exitTimeoutMinimumAboveMaximum(minimum: .seconds(60), maximum: .seconds(30))) {
            try MonitoringConfiguration(exitTimeout: .seconds(30), adaptiveExit: AdaptiveExit(minimum: .seconds(60)))
        }
        #expect(throws: MonitoringConfigurationError.exitChanceOutOfRange(2)) { try AdaptiveExit(minimum: .seconds(2), chance: 2) }
        #expect(MonitoringConfigurationError.exitChanceOutOfRange(2).description.contains("exit_chance = 0.001"))
    }
}
