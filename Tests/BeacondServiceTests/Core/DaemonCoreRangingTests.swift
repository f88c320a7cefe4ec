import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// Ranging and the services switch: a WhenInUse app ranges only while its client is in use, and switching location
/// services off stops every app's monitoring and ranging, loudly.
@Suite("daemon core: ranging and the services switch")
struct DaemonCoreRangingTests {
    typealias H = CoreHarness

    static func constraint() throws -> BeaconIdentityConstraint { try BeaconIdentityConstraint(uuid: H.uuid, major: 1, minor: 1) }

    /// The ranging results a client got, as the number of beacons in each.
    static func ranged(_ effects: [DaemonEffect], to client: Int) -> [Int] {
        effects.compactMap {
            guard case .range(let address, _, let reports) = $0, address.number == client else { return nil }
            return reports.count
        }
    }

    @Test func aWhenInUseClientRangesOnlyWhileInUse() throws {
        let h = try H()
        let client = try h.register(H.table)
        try h.grant(H.table, .authorizedWhenInUse)
        #expect(h.call(.startRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        h.run(to: 1)
        h.see()
        h.run(to: 3)
        var effects = h.take()
        #expect(Self.ranged(effects, to: client).contains(1), "the beacon is ranged about once a second")
        #expect(effects.properties(of: client).contains([.rangedConstraints]))

        #expect(h.call(.setInUse(client: client, false)) == .success(.none))
        effects = h.take()
        #expect(effects.properties(of: client) == [[.inUse(false)]])
        #expect(effects.logs(.info).contains { $0.contains("ranging of /org/beacond/client/\(client) paused") })
        h.keepSeeing(until: 8)
        #expect(Self.ranged(h.take(), to: client).isEmpty, "paused while not in use")

        #expect(h.call(.setInUse(client: client, true)) == .success(.none))
        h.keepSeeing(until: 11)
        #expect(Self.ranged(h.take(), to: client).contains(1), "resumed by SetInUse(true)")
    }

    @Test func rangingAConstraintTwiceIsOneAndStoppingOneNeverRangedIsRefused() throws {
        let h = try H()
        let client = try h.register(H.table)
        try h.grant(H.table, .authorizedWhenInUse)
        #expect(h.call(.startRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        #expect(h.call(.startRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        #expect(h.core.clients[client]?.rangedConstraints == [try Self.constraint()])
        let other = try BeaconIdentityConstraint(uuid: H.uuid, major: 2, minor: nil)
        guard case .failure(.beacond(let error)) = h.call(.stopRanging(client: client, .success(other))) else {
            Issue.record("StopRanging of a constraint never ranged succeeded")
            return
        }
        #expect(error.name == .unknownRegion && error.message.contains("it ranges: "))
        #expect(h.call(.stopRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        h.keepSeeing(until: 4)
        #expect(Self.ranged(h.take(), to: client).isEmpty)
    }

    @Test func switchingLocationServicesOffFailsEveryRegionAndSaysSo() throws {
        let files = try CoreFiles()
        try switchOff(files)
        // Saved: a restart keeps it off.
        let restarted = try H(files: files)
        #expect(restarted.core.authorization.servicesSwitch == false)
        #expect(restarted.core.clients.registry.regionCount == 0)
    }

    private func switchOff(_ files: CoreFiles) throws {
        let h = try H(files: files)
        let client = try h.alwaysClientMonitoringLobby()
        _ = h.take()
        #expect(h.call(.setLocationServicesEnabled(false)) == .success(.none))
        let effects = h.take()
        #expect(effects.has { if case .managerPropertyChanged(.locationServicesEnabled(false)) = $0 { true } else { false } })
        #expect(effects.adminEvents.contains(.locationServicesChanged(enabled: false)))
        let signals = effects.signals(to: client)
        #expect(signals.contains { $0.hasPrefix("monitoringDidFail lobby") }, "\(signals)")
        #expect(h.core.clients[client]?.regions.isEmpty == true)
        #expect(h.core.effectiveStatus(H.door) != .authorizedAlways)
        h.feed(.shuttingDown)
    }
}
