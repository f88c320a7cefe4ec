import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// A restart: the regions saved in the state file come back detached and blind, and the time beacond was down
/// counts as time nothing could be seen, never as absence.
@Suite("daemon core: restore after a restart")
struct DaemonCoreRestoreTests {
    typealias H = CoreHarness

    /// Before the restart: an Always client saw the beacon in "lobby", then beacond shut down. Returns the client.
    private func runUntilShutdown(_ files: CoreFiles) throws -> Int {
        let h = try H(files: files)
        let client = try h.alwaysClientMonitoringLobby()
        h.feed(.started)
        h.run(to: 1)
        h.see()
        #expect(h.core.clients.engine.monitoredRegion(client: client, identifier: "lobby")?.state == .inside)
        h.run(to: 5)
        h.feed(.shuttingDown)
        return client
    }

    /// Restarted ten minutes later: the region is back under its client, detached, and unknown until the scanner
    /// has looked.
    private func restart(_ files: CoreFiles, client: Int) throws -> H {
        let h = try H(files: files, at: CoreHarness.origin + .seconds(600))
        let session = try #require(h.core.clients[client])
        #expect(!session.isConnected)
        #expect(session.regionOrder == ["lobby"])
        #expect(h.core.clients.engine.monitoredCount == 1)
        #expect(h.core.clients.engine.monitoredRegion(client: client, identifier: "lobby") != nil)
        _ = h.take()
        h.feed(.started)
        #expect(h.take().scannerCommands == ["start"])
        return h
    }

    @Test func aBeaconStillPresentDoesNotEnterAgain() throws {
        let files = try CoreFiles()
        let client = try runUntilShutdown(files)
        let h = try restart(files, client: client)
        h.keepSeeing(until: 700)
        let effects = h.take()
        #expect(!effects.regionEvents.contains { $0.hasPrefix("didEnterRegion") || $0.hasPrefix("didExitRegion") })
        #expect(effects.activations.isEmpty, "nothing to queue, so nothing to start")
        #expect(h.core.clients.engine.monitoredRegion(client: client, identifier: "lobby")?.state == .inside)
    }

    @Test func aBeaconThatLeftExitsOnceAfterExitTimeoutOfScanning() throws {
        let files = try CoreFiles()
        let client = try runUntilShutdown(files)
        let h = try restart(files, client: client)
        h.run(to: 629.9)
        #expect(!h.take().regionEvents.contains { $0.hasPrefix("didExitRegion") }, "the downtime is not absence")
        h.run(to: 630.1)
        let exits = h.take().notified.filter { $0.event.text == "didExitRegion lobby" }
        #expect(exits.count == 1)
        #expect(exits.first?.address.number == client)
        #expect(exits.first?.event.info?.timestamp == h.at(630))
        h.run(to: 2000)
        #expect(!h.take().regionEvents.contains { $0.hasPrefix("didExitRegion") })
    }

    /// The phone's key changed in apps.d while beacond was down: its saved region comes back for the key its name
    /// has now (the saved fingerprint is the old key's), and is saved so; a name removed meanwhile drops its region.
    @Test func aSavedDeviceRegionFollowsItsNameAcrossARestart() throws {
        let second = try IdentityResolvingKey(parsing: "0c1d2e3f405162738495a6b7c8d9eafb")
        func apps(phone key: String?) -> [String: String] {
            var apps = H.apps
            if let key { apps["door"] = (apps["door"] ?? "") + "\n[devices]\nphone = \"irk:\(key)\"\n" }
            return apps
        }
        let files = try CoreFiles(apps: apps(phone: "ec0234a357c8ad05341010a60a397d9b"))
        // Each run in its own scope: a harness holds the state directory's lock until it goes.
        let client = try { () throws -> Int in
            let before = try H(files: files)
            let client = try before.register()
            try before.grant()
            try before.monitor(client, BeaconRegion(identifier: "p", constraint: .privateDevice(named: "phone")))
            before.feed(.shuttingDown)
            return client
        }()
        try files.rewrite(apps: apps(phone: "0c1d2e3f405162738495a6b7c8d9eafb"))
        try {
            let after = try H(files: files, at: CoreHarness.origin + .seconds(60))
            #expect(after.core.clients[client]?.regions["p"]?.constraint.uuid == second.fingerprint)
            after.feed(.shuttingDown)
        }()
        try {
            let again = try H(files: files, at: CoreHarness.origin + .seconds(90))
            #expect(again.core.clients[client]?.regions["p"]?.constraint.uuid == second.fingerprint, "saved as moved")
            again.feed(.shuttingDown)
        }()
        try files.rewrite(apps: apps(phone: nil))
        try {
            let gone = try H(files: files, at: CoreHarness.origin + .seconds(120))
            #expect(gone.core.clients[client] == nil, "its only region is not resumed")
            gone.feed(.shuttingDown)
        }()
        try files.rewrite(apps: apps(phone: "0c1d2e3f405162738495a6b7c8d9eafb"))
        let third = try H(files: files, at: CoreHarness.origin + .seconds(180))
        #expect(third.core.clients[client] == nil, "and it was removed from the state file")
    }
}
