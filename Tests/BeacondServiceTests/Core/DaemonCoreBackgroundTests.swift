import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// Background delivery: an Always app without a client has its region events queued (saved), is started by the
/// bus (rate-limited), and its next client gets the queue late, with the original times; expired events are
/// dropped and counted.
@Suite("daemon core: background delivery")
struct DaemonCoreBackgroundTests {
    typealias H = CoreHarness

    /// The Door app's only client left; its "lobby" is monitored detached and the scanner runs.
    private func detachedLobby() throws -> (H, client: Int) {
        let h = try H()
        let client = try h.alwaysClientMonitoringLobby()
        h.feed(.connectionClosed(":1.1"))
        _ = h.take()
        return (h, client)
    }

    /// As `GetStatus` and `ListApps` read them: through the view, from the store.
    private func queued(_ h: H) throws -> Int { try CoreView(h.core).queuedEventCounts()[H.door] ?? 0 }

    @Test func aDetachedClientsEventsAreQueuedAndDeliveredLate() throws {
        let (h, _) = try detachedLobby()
        h.run(to: 1)
        h.see()
        var effects = h.take()
        #expect(effects.activations == [H.door])
        #expect(effects.armed(.queueExpiry) == [h.at(61) + .milliseconds(1)])
        h.feed(.commit(.processCrash))
        #expect(try queued(h) == 1, "saved before the signals about it leave")

        // The exit 30 s later is queued too, but the app was started less than activation_interval ago.
        h.run(to: 31.5)
        effects = h.take()
        #expect(effects.regionEvents.contains("didExitRegion lobby"))
        #expect(effects.activations.isEmpty)
        h.feed(.commit(.processCrash))
        #expect(try queued(h) == 2)

        // The started app registers: both events, in order, late, at their original times, to it alone.
        h.run(to: 40)
        let client = try h.register(sender: ":1.7")
        effects = h.take()
        let delivered = effects.notified.filter {
            $0.address.number == client && ($0.event.text.hasPrefix("didEnter") || $0.event.text.hasPrefix("didExit"))
        }
        #expect(
            delivered.map(\.event) == [
                .didEnterRegion(try H.region("lobby"), EventInfo(at: h.at(1), late: true)),
                .didExitRegion(try H.region("lobby"), EventInfo(at: h.at(31), late: true)),
            ])
        #expect(delivered.allSatisfy { $0.audience == .clientOnly }, "administrators saw them when they happened")
        // Once the signals are sent, the queue is emptied.
        h.feed(.signalsSent)
        #expect(try queued(h) == 0)
    }

    /// A flapping region starts the app at most once per activation_interval (60 s).
    @Test func activationIsRateLimited() throws {
        let (h, _) = try detachedLobby()
        var activations: [Double] = []
        // Enters at 1, 36, 71, …; each exits 30 s after its sighting. Every event is queued.
        for second in stride(from: 1.0, through: 176, by: 35) {
            h.run(to: second)
            h.see()
            activations += h.take().activations.map { _ in second }
            h.run(to: second + 30.001)
            activations += h.take().activations.map { _ in second + 30 }
        }
        #expect(activations == [1, 66, 136, 206])
    }

    /// queue_ttl: the expiry timer drops the expired event whether or not the app comes back, is armed again for
    /// the next, and the app's next client hears how many were dropped (DroppedBefore) on its first late event.
    @Test func expiredEventsAreDroppedAndCounted() throws {
        let (h, _) = try detachedLobby()
        h.run(to: 1)
        h.see() // DidEnterRegion at 1
        h.run(to: 40) // DidExitRegion at 31
        h.feed(.commit(.processCrash))
        #expect(try queued(h) == 2)
        #expect(h.core.outbox.armedTimers[.queueExpiry] == h.at(61) + .milliseconds(1))
        _ = h.take()

        h.run(to: 62)
        let effects = h.take()
        #expect(effects.logs(.notice).contains { $0.contains("1 queued events of \(H.door) expired") })
        #expect(try queued(h) == 1)
        #expect(effects.armed(.queueExpiry) == [h.at(91) + .milliseconds(1)], "armed again for the exit at 31")

        let client = try h.register(sender: ":1.7")
        let delivered = h.take().notified.filter { $0.address.number == client && $0.event.info != nil }
        #expect(delivered.map(\.event) == [.didExitRegion(try H.region("lobby"), EventInfo(at: h.at(31), late: true, droppedBefore: 1))])
    }
}
