import BeaconLocation
import BeacondAPI
import Foundation
import Testing

/// beacond killed (-9) and started again mid-stream, and beacond absent when the program starts: both faces
/// register again by themselves, lose nothing and repeat nothing, and ranging resumes.
@Suite("BeaconLocation across beacond's restarts", .serialized)
struct RestartTests {
    @Test("LocationManager survives kill -9: one entry, one exit, ranging resumes unasked")
    func managerSurvivesKill9() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await manager.startMonitoring(for: BeaconRegion(uuid: World.demoUUID, major: 1, identifier: "lobby"))
        try await manager.startRangingBeacons(satisfying: BeaconIdentityConstraint(uuid: World.demoUUID, major: 1))
        let beacon = Advertiser(world)
        beacon.on()
        try await until("the entry before the crash") { !delegate.entries.isEmpty }
        try await until("ranging before the crash") { delegate.ranged.contains { !$0.isEmpty } }

        world.killDaemon()
        try await until("the library noticing beacond is gone") {
            delegate.calls.contains(.error(BeaconLocationError.daemonUnavailableName))
        }
        let mark = delegate.calls.count
        try await world.startDaemon()
        // Ranging resumes without the program asking again; the region is the app's, taken over with its state.
        try await until("a ranged beacon after the restart") {
            delegate.calls.dropFirst(mark).contains { if case .range(let beacons, _) = $0 { !beacons.isEmpty } else { false } }
        }
        #expect(manager.monitoredRegions.map(\.identifier) == ["lobby"])
        await beacon.off()
        try await until("the exit after the restart") { !delegate.exits.isEmpty }
        // Nothing repeats. The marker is a whole second visit: its exit comes exit_timeout after the beacon left
        // again, so after anything the restart could have repeated, whether at registration or from a timer
        // (beacond's signals come in order); a repeat would show in the order of entries and exits.
        beacon.on()
        try await until("the second entry") { delegate.entries.count >= 2 }
        await beacon.off()
        try await until("the second exit, the marker") { delegate.exits.count >= 2 }
        let visits = delegate.calls.filter { if case .enter = $0 { true } else if case .exit = $0 { true } else { false } }
        let entry = Recorder.Call.enter("lobby", late: false)
        let exit = Recorder.Call.exit("lobby", late: false)
        #expect(visits == [entry, exit, entry, exit], "\(delegate.calls)")
        await manager.close()
    }

    @Test("Monitor survives kill -9: exactly inside, then outside")
    func monitorSurvivesKill9() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let (monitor, log, beacon) = try await EventLog.lobbyInside(world)
        world.killDaemon()
        try await until("the diagnostic that beacond is gone") { log.last?.daemonUnavailable == true }
        try await world.startDaemon()
        try await until("ready again") { log.last?.isBlocked == false }
        await beacon.off()
        try await until("outside after the restart") { log.states.contains("lobby outside") }
        #expect(monitor.identifiers == ["lobby"])
        #expect(monitor.record(for: "lobby")?.lastEvent?.state == .outside)
        // Exactly inside, then outside. The marker is a whole second visit, whose exit comes exit_timeout after
        // the beacon left again: after anything the restart could have repeated, at registration or from a timer.
        beacon.on()
        try await until("inside again") { log.states.count >= 3 }
        await beacon.off()
        try await until("outside again, the marker") { log.states.count >= 4 }
        #expect(log.states == ["lobby inside", "lobby outside", "lobby inside", "lobby outside"])
        await monitor.close()
        await log.wait()
        #expect(log.ended.map { $0 == nil } == true, "closing ends the events without an error")
    }

    @Test("beacond absent at start: the diagnostics say so, and the monitor registers once it is there")
    func daemonAbsentAtStart() async throws {
        let world = try World()
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        let first = monitor.session.diagnostic
        // Not systemctl: this bus is a private one, and beacond is started on it by hand.
        #expect(first.daemonUnavailable && first.message.contains("beacond --bus '\(world.address)'"), "\(first)")
        #expect(!first.message.contains("systemctl"), "\(first)")
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID), identifier: "anywhere") // kept
        #expect(monitor.identifiers == ["anywhere"])
        try await world.startDaemon()
        // The session asked for Always at once; with prompt = "admin" it waits for an administrator, and says so.
        try await until("the pending request") { monitor.session.diagnostic.authorizationRequestInProgress }
        #expect(monitor.session.diagnostic.message.contains("beaconctl auth grant org.example.Demo always"))
        try world.grant()
        try await until("nothing in the way") { !monitor.session.diagnostic.isBlocked }
        try await until("the kept condition monitored") { try world.regions().contains("anywhere") }
        await monitor.close()
    }

    @Test("'not in use' is said again after a restart, and ranging comes back when in use")
    func notInUseAfterRestart() async throws {
        let world = try await World.running(granting: "authorizedWhenInUse")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await manager.startRangingBeacons(satisfying: BeaconIdentityConstraint(uuid: World.demoUUID))
        try await manager.setInUse(false)
        #expect(try world.clients().contains("\"InUse\" b false"))
        world.killDaemon()
        try await world.startDaemon()
        try await until("the new client, not in use") { try world.clients().contains("\"InUse\" b false") }
        #expect(try !world.clients().contains("\"InUse\" b true"))
        #expect(!delegate.calls.contains { if case .rangingFailed = $0 { true } else { false } }, "\(delegate.calls)")
        let beacon = Advertiser(world)
        beacon.on()
        let mark = delegate.ranged.count
        try await manager.setInUse(true)
        try await until("ranging again once in use") { delegate.ranged.dropFirst(mark).contains { !$0.isEmpty } }
        await beacon.off()
        await manager.close()
    }

    @Test("beacond not running but activatable: the bus starts it for the library, as for any D-Bus call")
    func activation() async throws {
        let world = try World(activatable: true)
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        #expect(!monitor.session.diagnostic.daemonUnavailable, "\(monitor.session.diagnostic)")
        try await until("the activated beacond's pending request") {
            try world.admin("ListPendingRequests", "uu", ["0", "10"]).contains(World.demo)
        }
        #expect(world.daemonLog.contains("serving org.beacond"), "\(world.daemonLog)")
        await monitor.close()
    }
}
