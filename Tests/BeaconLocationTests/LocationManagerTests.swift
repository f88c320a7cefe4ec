import BeaconLocation
import BeacondAPI
import Foundation
import Synchronization
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
        #expect(try await manager.requestAlwaysAuthorization() == .notDetermined)
        #expect(try world.admin("ListPendingRequests", "uu", ["0", "10"]).contains("\"always\""))
        // Not authorized yet: refused with what to do, never silently.
        let refusal = await #expect(throws: BeaconLocationError.self) { try await manager.startMonitoring(for: region) }
        #expect(refusal?.beacondError == .notAuthorized)
        #expect(refusal?.message.contains("beaconctl auth grant org.example.Demo always") == true, "\(refusal?.message ?? "")")
        try world.grant()
        try await until("authorizedAlways at the delegate") { delegate.statuses.last == .authorizedAlways }
        // The grant came after any repeat of the first status would have: told once.
        #expect(delegate.statuses == [.notDetermined, .authorizedAlways], "\(delegate.calls)")
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

    @Test("a delegate written with Core Location's signatures (error: any Error) is called, as is the typed spelling")
    func bothDelegateSpellingsAreCalled() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let (first, typed, second, coreLocation) = try await Self.bothSpellings(world)
        try await first.startMonitoring(for: region)
        try await second.startMonitoring(for: BeaconRegion(uuid: World.demoUUID, major: 2, identifier: "hall"))
        try world.grant("denied")
        try await until("monitoringDidFailFor, both spellings: \(typed.calls) \(coreLocation.calls)") {
            typed.calls.contains(.monitoringFailed("lobby", BeacondErrorName.notAuthorized.rawValue))
                && coreLocation.calls.contains("monitoringDidFail hall \(BeacondErrorName.notAuthorized.rawValue)")
        }
        world.killDaemon()
        try await until("didFailWithError, both spellings") {
            typed.calls.contains(.error(BeaconLocationError.daemonUnavailableName))
                && coreLocation.calls.contains("didFailWithError \(BeaconLocationError.daemonUnavailableName)")
        }
        await first.close()
        await second.close()
    }

    @Test("beacond unable to scan reaches didFailRangingFor (RangingUnavailable), and ranging comes back when it scans")
    func scannerFailureReachesRanging() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let (first, typed, second, coreLocation) = try await Self.bothSpellings(world)
        try world.breakFifo()
        let constraint = BeaconIdentityConstraint(uuid: World.demoUUID, major: 1)
        try await first.startRangingBeacons(satisfying: constraint)
        try await until("didFailRangingFor: cannot scan") {
            typed.calls.contains(.rangingFailed(constraint, BeaconLocationError.rangingUnavailableName))
        }
        // Started while beacond cannot scan: said at once.
        try await second.startRangingBeacons(satisfying: constraint)
        try await until("didFailRangingFor, Core Location's spelling") {
            coreLocation.calls.contains { $0.hasPrefix("didFailRangingFor \(BeaconLocationError.rangingUnavailableName) beacond cannot scan: ") }
        }
        #expect(coreLocation.calls.contains { $0.contains("not a FIFO") }, "beacond's reason: \(coreLocation.calls)")
        #expect(first.rangedBeaconConstraints == [constraint], "the ranging stays started")
        try world.repairFifo()
        let beacon = Advertiser(world)
        beacon.on()
        // beacond tries a failed scanner again every 30 s.
        try await until("ranged again once beacond scans", timeout: .seconds(90)) { typed.ranged.contains { !$0.isEmpty } }
        #expect(typed.calls.filter { if case .rangingFailed = $0 { true } else { false } }.count == 1, "once: \(typed.calls)")
        await beacon.off()
        await first.close()
        await second.close()
    }
}

extension LocationManagerTests {
    /// Two managers of the demo app: one whose delegate types its errors, one with Core Location's signatures.
    static func bothSpellings(_ world: World) async throws -> (LocationManager, Recorder, LocationManager, CoreLocationSpelling) {
        let typed = Recorder()
        let coreLocation = CoreLocationSpelling()
        let first = try await LocationManager(appID: World.demo, bus: world.address, delegate: typed)
        let second = try await LocationManager(appID: World.demo, bus: world.address, delegate: coreLocation)
        return (first, typed, second, coreLocation)
    }
}

/// A delegate with Core Location's signatures: the errors are `any Error`.
final class CoreLocationSpelling: LocationManagerDelegate {
    private let log = Mutex<[String]>([])
    var calls: [String] { log.withLock { $0 } }

    func locationManager(_ manager: LocationManager, monitoringDidFailFor region: BeaconRegion?, withError error: any Error) {
        log.withLock { $0.append("monitoringDidFail \(region?.identifier ?? "-") \((error as? BeaconLocationError)?.name ?? "?")") }
    }
    func locationManager(_ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: any Error) {
        let error = error as? BeaconLocationError
        log.withLock { $0.append("didFailRangingFor \(error?.name ?? "?") \(error?.message ?? "")") }
    }
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        log.withLock { $0.append("didFailWithError \((error as? BeaconLocationError)?.name ?? "?")") }
    }
}
