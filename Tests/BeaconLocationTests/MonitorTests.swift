import BeaconLocation
import BeacondAPI
import Foundation
import Testing

/// The modern face against the real beacond: diagnostics that say why nothing comes, and the region limit.
@Suite("Monitor and ServiceSession against the real beacond", .serialized)
struct MonitorTests {
    @Test("a denied app is told why and how to fix it, through services off and WhenInUse")
    func deniedApp() async throws {
        let world = try await World.running()
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        let log = EventLog(monitor)
        try world.grant("denied")
        try await until("denied") { log.last?.authorizationDenied == true }
        #expect(log.last?.message.contains("beaconctl auth grant org.example.Demo always") == true)
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID), identifier: "lobby") // waits
        #expect(monitor.identifiers == ["lobby"])
        try world.admin("SetLocationServicesEnabled", "b", ["false"])
        try await until("services off") { log.last?.locationServicesDisabled == true }
        #expect(log.last?.message.contains("beaconctl services on") == true)
        try world.admin("SetLocationServicesEnabled", "b", ["true"])
        try world.grant("authorizedWhenInUse")
        try await until("WhenInUse, and Always needed") { log.last?.alwaysAuthorizationDenied == true }
        try world.grant()
        try await until("nothing in the way") { log.last?.isBlocked == false }
        try await until("the waiting condition monitored") { try world.regions().contains("lobby") }
        await monitor.close()
    }

    @Test("the event stream itself says why nothing comes: beacond absent, pending, denied, a scanner that fails, beacond gone")
    func eventStreamSaysWhy() async throws {
        let world = try World()
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        let log = EventLog(monitor)
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 1), identifier: "lobby")
        try await until("beacond absent, said as an event") { log.diagnosticEvents.last?.diagnostic?.daemonUnavailable == true }
        #expect(log.lines.last?.hasPrefix("lobby waiting: beacond is not running on the bus at \(world.address)") == true, "\(log.lines)")
        #expect(log.lines.last?.contains("beacond --bus '\(world.address)'") == true, "\(log.lines)")

        try await world.startDaemon()
        try await until("the pending request") { log.diagnosticEvents.last?.diagnostic?.authorizationRequestInProgress == true }
        #expect(log.lines.last == "lobby waiting: " + (log.diagnosticEvents.last?.diagnostic?.message ?? "?"))
        #expect(log.lines.last?.contains("beaconctl auth grant org.example.Demo always") == true, "\(log.lines)")

        try world.grant("denied")
        try await until("denied") { log.diagnosticEvents.last?.diagnostic?.authorizationDenied == true }
        #expect(log.lines.last?.contains("is denied: an administrator allows it with `beaconctl auth grant") == true)

        try world.breakFifo()
        try world.grant()
        try await until("the scanner that cannot scan") { log.diagnosticEvents.last?.diagnostic?.scannerUnavailable == true }
        #expect(log.lines.last?.contains("lobby waiting: beacond cannot scan: ") == true, "\(log.lines)")
        #expect(log.lines.last?.contains("not a FIFO") == true, "the reason, from beacond: \(log.lines)")
        let failedAt = log.allEvents.count
        try world.repairFifo()
        // beacond tries a failed scanner again every 30 s.
        try await until("ready once it scans", timeout: .seconds(90)) {
            log.allEvents.dropFirst(failedAt).contains { $0.diagnostic?.isBlocked == false }
        }
        #expect(log.lines.last == "lobby ready", "\(log.lines)")
        #expect(log.diagnosticEvents.allSatisfy { $0.identifier == "lobby" && $0.state == .unknown })

        world.killDaemon()
        try await until("beacond gone, said as an event") { log.diagnosticEvents.last?.diagnostic?.daemonUnavailable == true }
        #expect(log.states.isEmpty, "no state event came: \(log.states)")
        let before = log.allEvents.count
        await monitor.close()
        await log.wait()
        #expect(log.allEvents.count == before, "closing said something: \(log.lines.dropFirst(before))")
    }

    @Test("one state change, one event: denied and granted again twice while inside repeats no entry")
    func denyAndGrantWhileInside() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let (monitor, log, beacon) = try await EventLog.lobbyInside(world)
        for round in 1...2 {
            try world.grant("denied")
            try await until("denied, round \(round)") { log.diagnosticEvents.last?.diagnostic?.authorizationDenied == true }
            try world.grant()
            try await until("ready, round \(round)") { log.diagnosticEvents.last?.diagnostic?.isBlocked == false }
            try await until("lobby inside again at beacond") { try world.regions().contains("\"inside\"") }
        }
        // A call's reply comes after every signal beacond sent before it: a repeated entry would be in the log now.
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 9), identifier: "probe")
        #expect(log.states.filter { $0.hasPrefix("lobby") } == ["lobby inside"], "\(log.lines)")
        #expect(log.lines.filter { $0.hasPrefix("lobby") && !$0.hasSuffix("inside") }.count == 4, "\(log.lines)")
        await beacon.off()
        await monitor.close()
    }

    @Test("the region limit: refused with the key to raise, said by the diagnostics, cleared by a removal")
    func regionLimit() async throws {
        let world = try await World.running(settings: World.settings + "max_regions_per_client = 2\n", granting: "authorizedAlways")
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        try await until("authorizedAlways") { monitor.session.authorizationStatus == .authorizedAlways }
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 1), identifier: "one")
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 2), identifier: "two")
        let refused = await #expect(throws: BeaconLocationError.self) {
            try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 3), identifier: "three")
        }
        #expect(refused?.beacondError == .regionLimitExceeded)
        #expect(refused?.message.contains("max_regions_per_client") == true)
        let diagnostic = monitor.session.diagnostic
        #expect(diagnostic.regionLimitExceeded && diagnostic.message.contains("max_regions_per_client"))
        #expect(monitor.identifiers == ["one", "two"])
        try await monitor.remove("one")
        #expect(!monitor.session.diagnostic.isBlocked, "\(monitor.session.diagnostic)")
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 3), identifier: "three")
        #expect(monitor.identifiers == ["three", "two"])
        await monitor.close()
    }

    @Test("conditions that waited and are then refused are said, not dropped")
    func waitingConditionsRefusedLater() async throws {
        let world = try await World.running(settings: World.settings + "max_regions_per_client = 2\n")
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        for (major, name) in [(UInt16(1), "one"), (2, "two"), (3, "three")] {
            try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: major), identifier: name)
        }
        try world.grant()
        try await until("the refusal of the third") { !monitor.refused.isEmpty }
        #expect(Array(monitor.refused.keys) == ["three"])
        #expect(monitor.refused["three"]?.beacondError == .regionLimitExceeded)
        #expect(monitor.session.diagnostic.conditionRefused || monitor.session.diagnostic.regionLimitExceeded)
        #expect(monitor.session.diagnostic.message.contains("max_regions_per_client"))
        await monitor.close()
    }

    @Test("events queued while the app had no client arrive late, in order")
    func queuedEventsArriveLate() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let first = try await Monitor(appID: World.demo, bus: world.address)
        try await first.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 1), identifier: "lobby")
        try await until("lobby determined") { try world.regions().contains("outside") }
        await first.close()
        try await world.enterAndExit()
        let next = try await Monitor(appID: World.demo, bus: world.address)
        let log = EventLog(next)
        try await until("the queued events") { log.states.count >= 2 }
        #expect(Array(log.states.suffix(2)) == ["lobby inside", "lobby outside"], "\(log.states)")
        #expect(log.events.suffix(2).allSatisfy { $0.late })
        #expect(log.events.suffix(2).map(\.date) == log.events.suffix(2).map(\.date).sorted())
        await next.close()
    }

    @Test("signals from anyone but beacond are ignored: a forged exit, a forged owner change")
    func forgedSignalsAreIgnored() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let (monitor, log, beacon) = try await EventLog.lobbyInside(world)
        // Another program on the bus sends the library's connection what only beacond and the bus may say.
        let clients = try world.clients()
        let sender = try #require(clients.firstMatch(of: /"Sender" s "(:[0-9.]+)"/)?.1)
        let path = try #require(clients.firstMatch(of: /"Path" o "([^"]+)"/)?.1)
        let region = "{'Identifier': <'lobby'>, 'UUID': <'\(World.demoUUID.uuidString)'>, 'Major': <uint16 1>}"
        let forgedExit = try World.run(
            "/usr/bin/gdbus",
            [
                "emit", "--address", world.address, "--dest", String(sender), "--object-path", String(path),
                "--signal", "org.beacond.LocationManager1.DidExitRegion", region, "{'Timestamp': <uint64 1>}",
            ])
        #expect(forgedExit.status == 0, "\(forgedExit.output)")
        // "beacond (its real unique name) left the bus": believed, it would make the client register again.
        let owner = try world.busctl([
            "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", "s", "org.beacond",
        ])
        let daemon = try #require(owner.output.firstMatch(of: /s "(:[0-9.]+)"/)?.1)
        let forgedOwner = try World.run(
            "/usr/bin/gdbus",
            [
                "emit", "--address", world.address, "--dest", String(sender), "--object-path", "/org/freedesktop/DBus",
                "--signal", "org.freedesktop.DBus.NameOwnerChanged", "org.beacond", String(daemon), "",
            ])
        #expect(forgedOwner.status == 0, "\(forgedOwner.output)")
        // A marker after them: a second condition's entry, which beacond signals after the forged signals reached
        // the client. Had either been believed, the lobby would be outside before it, or the monitor blocked.
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 2), identifier: "marker")
        let marker = Advertiser(world, major: 2)
        marker.on()
        try await until("the marker inside: \(log.states)") { log.states.contains("marker inside") }
        await marker.off()
        #expect(log.states.filter { $0.hasPrefix("lobby") } == ["lobby inside"], "\(log.states)")
        #expect(!monitor.session.diagnostic.isBlocked, "\(monitor.session.diagnostic)")
        // Still registered where it was: the real exit comes.
        await beacon.off()
        try await until("the real exit") { log.states.filter { $0.hasPrefix("lobby") } == ["lobby inside", "lobby outside"] }
        await monitor.close()
    }
}
