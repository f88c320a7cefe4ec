#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import BeaconLocation
import BeacondAPI
import Foundation
import Synchronization
import Testing

/// What a hostile world does to a client: news while it connects, a hung beacond, a refusal an administrator
/// fixes, a program that drops its clients.
@Suite("BeaconLocation under faults", .serialized)
struct FaultTests {
    @Test("a LocationManager's delegate hears the app's queued events, which arrive while it connects")
    func managerHearsQueuedEvents() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let first = try await LocationManager(appID: World.demo, bus: world.address)
        try await first.startMonitoring(for: BeaconRegion(uuid: World.demoUUID, major: 1, identifier: "lobby"))
        try await until("lobby determined") { try world.regions().contains("\"outside\"") }
        await first.close()
        try await world.enterAndExit()
        let delegate = Recorder()
        let next = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await until("the queued events at the delegate: \(delegate.calls)") { delegate.exits.count == 1 }
        #expect(delegate.entries == [.enter("lobby", late: true)], "\(delegate.calls)")
        #expect(delegate.exits == [.exit("lobby", late: true)], "\(delegate.calls)")
        #expect(delegate.statuses == [.authorizedAlways], "told once: \(delegate.calls)")
        await next.close()
    }

    @Test("beacond absent at start: the delegate hears it")
    func managerHearsBeacondAbsent() async throws {
        let world = try World()
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await until("didFailWithError") { delegate.calls.contains(.error(BeaconLocationError.daemonUnavailableName)) }
        await manager.close()
    }

    @Test("a hung beacond: the registration times out, says so, and is tried again once beacond answers")
    func hungBeacondAtRegistration() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        world.signalDaemon(SIGSTOP)
        let monitor = try await Monitor(appID: World.demo, bus: world.address) // waits for RegisterClient's timeout
        let diagnostic = monitor.session.diagnostic
        #expect(diagnostic.message.contains("did not answer RegisterClient"), "\(diagnostic)")
        world.signalDaemon(SIGCONT)
        try await until("registered once beacond answers") { !monitor.session.diagnostic.isBlocked }
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID), identifier: "anywhere")
        #expect(try world.regions().contains("anywhere"))
        await monitor.close()
    }

    /// Issue 39: a cancelled open (a timeout around it) with beacond slow left a registered client behind, which took
    /// the app's regions. The cancelled initialiser now ends at once, throwing, and closes what it made.
    @Test("a Monitor cancelled while it registers ends at once and leaves no client behind")
    func cancelledOpenLeavesNoClient() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        world.signalDaemon(SIGSTOP)
        var stopped = true
        defer { if stopped { world.signalDaemon(SIGCONT) } }
        let opens = (0..<3).map { _ in Task { try await Monitor(appID: World.demo, bus: world.address) } }
        // Not a bound on anything: time for the registrations to be sent before they are cancelled (cancelled
        // earlier, they must leave nothing either).
        try await Task.sleep(for: .milliseconds(500))
        let cancelled = ContinuousClock.now
        for open in opens { open.cancel() }
        for open in opens {
            let result = await open.result
            #expect(throws: BeaconLocationError.self) { try result.get() }
        }
        #expect(ContinuousClock.now - cancelled < .seconds(15), "the opens ended when cancelled, not at the 25 s timeout")
        world.signalDaemon(SIGCONT)
        stopped = false
        // beacond answers the queued registrations of connections that are gone, and drops those clients.
        try await until("no client of the app left: \(try world.clients())") { try !world.clients().contains(World.demo) }
    }

    @Test("closing while a call waits on a hung beacond ends the call at once")
    func closeEndsWaitingCalls() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let manager = try await LocationManager(appID: World.demo, bus: world.address)
        // Registered and idle before beacond hangs: a call of the client's own still in flight (or a registration
        // not yet answered) would hold the one this test sends (CI saw it never sent, twice, under a full run).
        try await until("registered, with no call in flight") {
            let registered = await manager.client.isRegistered
            let pending = await manager.client.pendingCallMembers
            return registered && pending.isEmpty
        }
        world.signalDaemon(SIGSTOP)
        defer { world.signalDaemon(SIGCONT) }
        let call = Task { try await manager.requestAlwaysAuthorization() }
        try await until("the call sent to the hung beacond") {
            await manager.client.pendingCallMembers.contains(BeacondMember.requestAlwaysAuthorization)
        }
        let closed = ContinuousClock.now
        await manager.close() // its Close waits 2 s, then the connection ends
        let result = await call.result
        #expect(ContinuousClock.now - closed < .seconds(10), "the call ended with the client, not at its 25 s timeout")
        #expect(throws: BeaconLocationError.self) { try result.get() }
    }

    @Test("a refusal after a restart is tried again: the administrator's fix and a reload are enough")
    func refusalFixedByReload() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        world.killDaemon()
        let declaration = world.appsDirectory.appendingPathComponent("demo.toml")
        let text = try String(contentsOf: declaration, encoding: .utf8)
        try FileManager.default.removeItem(at: declaration)
        try await world.startDaemon()
        try await until("the refusal at the delegate") {
            delegate.calls.contains(.error(BeacondErrorName.unknownApp.rawValue))
        }
        try text.write(to: declaration, atomically: true, encoding: .utf8)
        try world.admin("Reload")
        try await until("registered again after the reload") { try world.clients().contains("\"Connected\" b true") }
        try await until("the status at the delegate") { delegate.statuses.last == .authorizedAlways }
        await manager.close()
    }

    @Test("clients made and dropped leave no thread stack behind")
    func droppedClientsLeaveNothing() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        func virtualKilobytes() -> Int {
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmSize:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        // Warm up (the concurrency pool's threads, glibc's stack cache), then measure.
        for _ in 0..<3 { await (try await LocationManager(appID: World.demo, bus: world.address)).close() }
        let before = virtualKilobytes()
        for index in 0..<24 {
            let manager = try await LocationManager(appID: World.demo, bus: world.address)
            if index % 2 == 0 { await manager.close() } // the others are dropped without close()
        }
        try await until("the dropped clients gone") { !(try world.clients().contains("\"Connected\" b true")) }
        let grown = virtualKilobytes() - before
        // A thread left joinable keeps its 8 MiB stack mapped: 24 of them would be 192 MiB.
        #expect(grown < 48 * 1024, "VmSize grew by \(grown) kB over 24 clients")
    }

    @Test("a dropped Monitor ends the iteration of its events")
    func droppedMonitorEndsEvents() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let events = try await Monitor(appID: World.demo, bus: world.address).events
        let ended = Mutex(false)
        let iteration = Task {
            for try await _ in events {}
            ended.withLock { $0 = true }
        }
        try await until("the events to end") { ended.withLock { $0 } }
        iteration.cancel()
    }
}
