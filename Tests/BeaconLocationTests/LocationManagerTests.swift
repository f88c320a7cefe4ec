import BeaconLocation
import BeacondAPI
import Foundation
import Testing

/// The classic face against the real beacond on a private bus: the iOS articles' flow, monitoring, ranging and
/// refusals. (Run in their own `swift test` process, one at a time: see Makefile's `test`.)
@Suite("LocationManager against the real beacond", .serialized)
struct LocationManagerTests {
    let region = BeaconRegion(uuid: World.demoUUID, major: 1, identifier: "lobby")

    @Test("a request waits for an administrator, whose answer reaches the delegate")
    func requestAnsweredByAnAdministrator() async throws {
        let world = try await World.running()
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await until("the status when the delegate is set") { delegate.statuses == [.notDetermined] }
        #expect(try await holds(for: .milliseconds(500)) { delegate.statuses == [.notDetermined] }, "told once")
        #expect(try await manager.requestAlwaysAuthorization() == .notDetermined)
        #expect(try world.admin("ListPendingRequests", "uu", ["0", "10"]).contains("\"always\""))
        // Not authorized yet: refused with what to do, never silently.
        let refusal = await #expect(throws: BeaconLocationError.self) { try await manager.startMonitoring(for: region) }
        #expect(refusal?.beacondError == .notAuthorized)
        #expect(refusal?.message.contains("beaconctl auth grant org.example.Demo always") == true, "\(refusal?.message ?? "")")
        try world.grant()
        try await until("authorizedAlways at the delegate") { delegate.statuses.last == .authorizedAlways }
        #expect(manager.authorizationStatus == .authorizedAlways)
        await manager.close()
    }

    @Test("monitoring: one entry and one exit, and the region is the app's")
    func monitoringEnterAndExit() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await manager.startMonitoring(for: region)
        #expect(manager.monitoredRegions.map(\.identifier) == ["lobby"])
        let beacon = Advertiser(world)
        beacon.on()
        try await until("the entry") { delegate.entries == [.enter("lobby", late: false)] }
        await beacon.off()
        try await until("the exit") { delegate.exits == [.exit("lobby", late: false)] }
        try await manager.requestState(for: region)
        try await until("the state asked for") { delegate.calls.last == .state(.outside, "lobby") }
        await manager.close()
        // Closing the client leaves the region to the app (Core Location's regions are the app's).
        #expect(try world.regions().contains("lobby"))
        let next = try await LocationManager(appID: World.demo, bus: world.address)
        #expect(next.monitoredRegions.map(\.identifier) == ["lobby"], "the next client takes it over")
        try await next.stopMonitoring(for: region)
        #expect(next.monitoredRegions.isEmpty)
        #expect(try !world.regions().contains("lobby"))
        await next.close()
    }

    @Test("ranging about once a second, with what beacond measured")
    func ranging() async throws {
        let world = try await World.running(granting: "authorizedWhenInUse")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await manager.startRangingBeacons(satisfying: BeaconIdentityConstraint(uuid: World.demoUUID, major: 1))
        let beacon = Advertiser(world)
        beacon.on()
        try await until("a ranged beacon") { delegate.ranged.contains { !$0.isEmpty } }
        let heard = try #require(delegate.ranged.first { !$0.isEmpty }?.first)
        #expect(heard.uuid == World.demoUUID && heard.major == 1 && heard.minor == 2)
        #expect(heard.rssi < 0 && heard.accuracy > 0 && heard.proximity != .unknown)
        #expect(manager.rangedBeaconConstraints == [BeaconIdentityConstraint(uuid: World.demoUUID, major: 1)])
        await beacon.off()
        await manager.close()
    }

    @Test("refusals throw beacond's message, which says the fix")
    func refusalsThrowWithTheFix() async throws {
        let world = try await World.running()
        let unknown = await #expect(throws: BeaconLocationError.self) {
            _ = try await LocationManager(appID: "org.example.Nobody", bus: world.address)
        }
        #expect(unknown?.beacondError == .unknownApp)
        #expect(unknown?.message.contains("apps.d") == true, "\(unknown?.message ?? "")")
        try world.grant("authorizedWhenInUse")
        let manager = try await LocationManager(appID: World.demo, bus: world.address)
        let always = await #expect(throws: BeaconLocationError.self) { try await manager.startMonitoring(for: region) }
        #expect(always?.beacondError == .notAuthorized)
        #expect(always?.message.contains("Always") == true || always?.message.contains("always") == true)
        let empty = await #expect(throws: BeaconLocationError.self) {
            try await manager.startMonitoring(for: BeaconRegion(uuid: World.demoUUID, identifier: ""))
        }
        #expect(empty?.beacondError == .invalidRegion)
        await manager.close()
    }

    @Test("an administrator revoking Always reaches the delegate")
    func revokedAlwaysReachesTheDelegate() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await manager.startMonitoring(for: region)
        try world.grant("denied")
        try await until("MonitoringDidFail") {
            delegate.calls.contains(.monitoringFailed("lobby", BeacondErrorName.notAuthorized.rawValue))
        }
        try await until("denied at the delegate") { delegate.statuses.last == .denied }
        #expect(manager.monitoredRegions.isEmpty)
        await manager.close()
    }
}
