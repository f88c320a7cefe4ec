import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// An Always client's regions are the app's: they outlive the client, and the app's next client takes them over
/// as they are (docs/dbus-api.md, "When a client leaves").
@Suite("daemon core: takeover")
struct DaemonCoreTakeoverTests {
    typealias H = CoreHarness

    /// How a client leaves: its connection closes, or it calls Close().
    enum Leaving: CaseIterable, CustomStringConvertible {
        case connectionClosed, close

        var description: String { self == .close ? "Close()" : "connection closed" }

        func input(client: Int, sender: String) -> DaemonInput {
            self == .close ? .call(.close(client: client)) : .connectionClosed(sender)
        }
    }

    @Test(arguments: Leaving.allCases)
    func theNextClientTakesTheRegionsOverInTheirState(_ leaving: Leaving) throws {
        let h = try H()
        let first = try h.alwaysClientMonitoringLobby(sender: ":1.1")
        h.run(to: 1)
        h.see()
        #expect(h.take().signals(to: first).contains("didEnterRegion lobby"))

        h.run(to: 2)
        h.feed(leaving.input(client: first, sender: ":1.1"))
        var effects = h.take()
        // The client's object goes, administrators hear it closed, its region stays: nothing fails or exits.
        #expect(effects.unexported == ["/org/beacond/client/\(first)"])
        #expect(effects.adminEvents.contains { if case .clientClosed(let address) = $0 { address.number == first } else { false } })
        #expect(!effects.signals(to: first).contains { $0.hasPrefix("monitoringDidFail") || $0.hasPrefix("didExit") })
        let detached = try #require(h.core.clients[first])
        #expect(!detached.isConnected)
        #expect(h.core.clients.engine.monitoredRegion(client: first, identifier: "lobby")?.state == .inside)

        // The app's next client registers: the region is its own now, still inside; the beacon still there does
        // not enter again, and the exit comes exit_timeout after the last sighting, to the new client.
        h.run(to: 3)
        let second = try h.register(sender: ":1.2")
        #expect(h.core.clients[first] == nil)
        #expect(h.core.clients[second]?.regionOrder == ["lobby"])
        #expect(h.core.clients.engine.monitoredRegion(client: second, identifier: "lobby")?.state == .inside)
        h.see()
        h.run(to: 32)
        effects = h.take()
        #expect(!effects.regionEvents.contains { $0.hasPrefix("didEnterRegion") })
        #expect(effects.activations.isEmpty, "the app has a client: nothing is queued")
        h.run(to: 33.1)
        #expect(h.take().signals(to: second) == ["didDetermineState outside lobby", "didExitRegion lobby"])
    }

    /// Two clients of the app monitor "lobby": when one leaves, the other (connected) takes its regions over at
    /// once; its own "lobby" wins and the leaving client's is reported replaced, not silently dropped.
    @Test func aDuplicateIdentifierIsReportedReplaced() throws {
        let h = try H()
        let first = try h.alwaysClientMonitoringLobby(sender: ":1.1")
        try h.monitor(first, try H.region("desk", minor: 3))
        let second = try h.register(sender: ":1.2")
        try h.monitor(second, try H.region("lobby", minor: 2))
        _ = h.take()

        h.feed(.connectionClosed(":1.1"))
        let effects = h.take()
        #expect(h.core.clients[first] == nil)
        #expect(h.core.clients[second]?.regions["lobby"]?.constraint.minor == 2)
        #expect(h.core.clients[second]?.regions["desk"] != nil)
        #expect(effects.signals(to: second) == ["monitoringDidFail lobby RegionReplaced"])
        let failure = effects.notified.compactMap { notified -> BeacondError? in
            if case .monitoringDidFail(let region, let error) = notified.event, region.constraint.minor == 1 { error } else { nil }
        }
        #expect(failure.first?.message.contains("same identifier") == true)
        #expect(effects.properties(of: second) == [[.monitoredRegions]])
    }

    /// A client without regions just ends: nothing stays detached.
    @Test func aClientWithoutRegionsEnds() throws {
        let h = try H()
        let client = try h.register()
        try h.grant()
        h.feed(.connectionClosed(":1.1"))
        #expect(h.core.clients[client] == nil)
        #expect(h.take().unexported == ["/org/beacond/client/\(client)"])
    }
}
