import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// A reload (SIGHUP, Admin1.Reload): a good configuration applies to every client at once, a rejected one leaves
/// the old one in force.
@Suite("daemon core: reload")
struct DaemonCoreReloadTests {
    typealias H = CoreHarness

    @Test func anAppNoLongerDeclaredFailsItsRegionsAndItsClientsClose() throws {
        let h = try H()
        let client = try h.alwaysClientMonitoringLobby()
        _ = h.take()
        try h.files.rewrite(apps: ["table": try #require(H.apps["table"])])
        let reply = h.call(.reload(.success(try h.files.configuration.load())))
        #expect(reply == .success(.configurationError("")))
        let effects = h.take()
        #expect(effects.signals(to: client) == ["monitoringDidFail lobby UnknownApp"])
        #expect(effects.unexported == ["/org/beacond/client/\(client)"])
        #expect(effects.adminEvents.contains { if case .clientClosed(let address) = $0 { address.number == client } else { false } })
        #expect(h.core.clients[client] == nil)
        #expect(h.core.clients.engine.monitoredCount == 0)
        #expect(effects.scannerCommands == ["stop"], "nobody monitors any more")
    }

    /// One reload that stops the last region and changes the scanner's source: the scanner stops because nobody
    /// needs it, said in the log, before the reload is announced (the source change then has no scanner to replace).
    @Test func aReloadThatStopsTheLastRegionAndChangesTheSourceSaysWhyScanningStopped() throws {
        let h = try H()
        _ = try h.alwaysClientMonitoringLobby()
        _ = h.take()
        try h.files.rewrite(
            settings: H.settings + "\n[scanner]\nsource = \"fifo:/run/beacond/other.fifo\"\n", apps: ["table": try #require(H.apps["table"])])
        #expect(h.call(.reload(.success(try h.files.configuration.load()))) == .success(.configurationError("")))
        let effects = h.take()
        #expect(effects.scannerCommands == ["stop"])
        #expect(effects.logs(.info).contains("scanning stopped: nobody monitors or ranges"), "\(effects.logs(.info))")
    }

    /// The disk is full and the reload removes an app's regions: it is in effect, and the reply says it could not
    /// be saved (Admin1.Reload answers StateNotSaved, as every call whose change was not saved).
    @Test func aReloadWhoseChangesCannotBeSavedSaysSo() throws {
        let (h, failing) = try DaemonCoreAuthorizationTests.onADatabaseThatCanFail()
        let client = try h.alwaysClientMonitoringLobby()
        _ = h.take()
        failing.failsWrites = true
        try h.files.rewrite(apps: ["table": try #require(H.apps["table"])])
        let reply = h.call(.reload(.success(try h.files.configuration.load())))
        guard case .failure(.beacond(let error)) = reply else {
            Issue.record("a reload whose changes were not saved answered \(reply)")
            return
        }
        #expect(error.name == .stateNotSaved && error.message.contains("in effect now but could not be saved"))
        #expect(h.core.clients[client] == nil)
    }

    @Test func aRejectedConfigurationKeepsTheOldOne() throws {
        let h = try H()
        let client = try h.alwaysClientMonitoringLobby()
        _ = h.take()
        let reply = h.call(.reload(.failure(ConfigurationRejection(message: "beacond.toml:2: exit_timeout must be > 0"))))
        #expect(reply == .success(.configurationError("beacond.toml:2: exit_timeout must be > 0")))
        let effects = h.take()
        #expect(effects.adminEvents == [.configurationRejected("beacond.toml:2: exit_timeout must be > 0")])
        #expect(effects.notified.isEmpty)
        #expect(h.core.configuration.exitTimeout == .seconds(30))
        #expect(h.core.clients[client]?.regionOrder == ["lobby"])
        #expect(h.core.source.rejection != nil)
    }

    /// A new exit_timeout rebuilds the engine with every region in its state: no event then, and the exit comes
    /// by the new timeout.
    @Test func aNewExitTimeoutRebuildsTheEngineWithoutEvents() throws {
        let h = try H()
        let client = try h.alwaysClientMonitoringLobby()
        h.run(to: 1)
        h.see()
        h.run(to: 2)
        _ = h.take()
        try h.files.rewrite(
            settings: H.settings.replacingOccurrences(of: "exit_timeout = 30", with: "exit_timeout = 10"),
            apps: H.apps)
        #expect(h.call(.reload(.success(try h.files.configuration.load()))) == .success(.configurationError("")))
        let effects = h.take()
        #expect(effects.notified.filter { $0.audience != .administratorsOnly }.isEmpty)
        #expect(h.core.clients.engine.monitoredRegion(client: client, identifier: "lobby")?.state == .inside)
        h.run(to: 10.9)
        #expect(h.take().regionEvents.isEmpty)
        h.run(to: 11.1)
        #expect(h.take().signals(to: client) == ["didDetermineState outside lobby", "didExitRegion lobby"])
    }

    /// A region and a ranging that name a private device follow the name: a reload that gives it another key moves
    /// both to the phone the name means now; one that removes the name stops both, each said with the fix.
    @Test func privateDeviceRegionsFollowTheirNameAcrossReloads() throws {
        let first = try IdentityResolvingKey(parsing: "ec0234a357c8ad05341010a60a397d9b")
        let second = try IdentityResolvingKey(parsing: "0c1d2e3f405162738495a6b7c8d9eafb")
        func apps(phone key: String?) -> [String: String] {
            var apps = H.apps
            if let key { apps["door"] = (apps["door"] ?? "") + "\n[devices]\nphone = \"irk:\(key)\"\n" }
            return apps
        }
        func address(_ key: IdentityResolvingKey, random: UInt32) -> BluetoothAddress {
            let prand = 0x40_0000 | random
            return BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(key.addressHash(prand: prand)))
        }
        func phoneHeard(_ key: IdentityResolvingKey, random: UInt32) -> DaemonInput {
            .scanner(.advertisement(AdvertisementContent(), rssi: -60, address: address(key, random: random), addressType: 1))
        }
        let h = try H()
        try h.files.rewrite(apps: apps(phone: "ec0234a357c8ad05341010a60a397d9b"))
        #expect(h.call(.reload(.success(try h.files.configuration.load()))) == .success(.configurationError("")))
        let client = try h.register()
        try h.grant()
        try h.monitor(client, BeaconRegion(identifier: "p", constraint: .privateDevice(named: "phone")))
        #expect(h.call(.startRanging(client: client, .success(.privateDevice(named: "phone")))) == .success(.none))
        #expect(h.core.clients[client]?.regions["p"]?.constraint.uuid == first.fingerprint)
        h.run(to: 1)
        _ = h.take()

        try h.files.rewrite(apps: apps(phone: "0c1d2e3f405162738495a6b7c8d9eafb"))
        #expect(h.call(.reload(.success(try h.files.configuration.load()))) == .success(.configurationError("")))
        #expect(!h.take().signals(to: client).contains { $0.contains("Fail") }, "moved, not failed")
        #expect(h.core.clients[client]?.regions["p"]?.constraint.uuid == second.fingerprint)
        #expect(h.core.clients[client]?.rangedConstraints.map(\.uuid) == [second.fingerprint])
        #expect(h.core.clients[client]?.regions["p"]?.constraint.deviceName == "phone")
        // The first key's phone is not 'phone' any more; the second's is.
        h.feed(phoneHeard(first, random: 0x1111))
        h.run(to: 2)
        #expect(!h.take().signals(to: client).contains("didEnterRegion p"))
        h.feed(phoneHeard(second, random: 0x2222))
        h.run(to: 3)
        #expect(h.take().signals(to: client).contains("didEnterRegion p"))

        try h.files.rewrite(apps: apps(phone: nil))
        #expect(h.call(.reload(.success(try h.files.configuration.load()))) == .success(.configurationError("")))
        let failed = h.take().signals(to: client).filter { $0.contains("Fail") }
        #expect(failed == ["monitoringDidFail p InvalidRegion", "rangingDidFail device:phone InvalidRegion"], "\(failed)")
        #expect(h.core.clients[client]?.regions.isEmpty == true && h.core.clients[client]?.rangedConstraints.isEmpty == true)
    }
}
