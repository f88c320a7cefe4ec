import BeaconKit
@testable import BeacondService
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
        #expect(h.core.engine.monitoredCount == 0)
        #expect(effects.scannerCommands == ["stop"], "nobody monitors any more")
    }

    /// The disk is full and the reload removes an app's regions: it is in effect, and the reply says it could not
    /// be saved (Admin1.Reload answers StateNotSaved, as every call whose change was not saved).
    @Test func aReloadWhoseChangesCannotBeSavedSaysSo() throws {
        let (h, failing) = try DaemonCoreAuthorizationTests.onAStoreThatCanFail()
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
        #expect(h.core.rejectedConfiguration != nil)
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
        #expect(h.core.engine.monitoredRegion(client: client, identifier: "lobby")?.state == .inside)
        h.run(to: 10.9)
        #expect(h.take().regionEvents.isEmpty)
        h.run(to: 11.1)
        #expect(h.take().signals(to: client) == ["didDetermineState outside lobby", "didExitRegion lobby"])
    }
}
