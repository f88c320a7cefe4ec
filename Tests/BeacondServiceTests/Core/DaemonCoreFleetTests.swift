import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Fleet
import Testing

/// `[mqtt]`: another receiver's readings count for this node's regions, and a receiver that goes offline makes
/// what only it heard unknown, never outside (docs/fleet.md, "Other receivers").
@Suite("daemon core: fleet receivers offline")
struct DaemonCoreFleetTests {
    typealias H = CoreHarness
    static let kitchen = ReceiverID(rawValue: 1)
    static let settings =
        CoreHarness.settings + """

            [mqtt]
            broker = "mqtt://localhost"
            room = "office"
            """

    /// A connected Always client monitors "lobby"; only the kitchen's receiver hears the beacon, from 1 s on.
    private func heardOnlyInTheKitchen() throws -> (H, client: Int) {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        let kitchen = ReceiverDirectory.Receiver(room: "kitchen", id: Self.kitchen, online: true, lastReading: nil, readings: 0)
        h.feed(.fleetStarted(FleetStart(room: "office", receivers: [kitchen], problem: nil)))
        let client = try h.alwaysClientMonitoringLobby()
        h.run(to: 1)
        heard(h)
        #expect(h.take().signals(to: client).suffix(2) == ["didDetermineState inside lobby", "didEnterRegion lobby"])
        return (h, client)
    }

    private func heard(_ h: H) {
        h.feed(.fleet(.sighting(H.identity(), rssi: -60, distance: 1.5, by: Self.kitchen), room: "kitchen"))
    }

    @Test func aRegionOnlyAnOfflineReceiverHeardIsUnknownAndSeenAgainWhenItComesBack() throws {
        let (h, client) = try heardOnlyInTheKitchen()
        h.run(to: 10)
        h.feed(.fleet(.receiverOffline(Self.kitchen), room: "kitchen"))
        #expect(h.take().signals(to: client) == ["didDetermineState unknown lobby"])
        // However long it stays away: no exit.
        h.run(to: 600)
        #expect(h.take().regionEvents.isEmpty)

        h.feed(.fleet(.receiverOnline(Self.kitchen), room: "kitchen"))
        h.run(to: 601)
        heard(h)
        h.run(to: 620)
        // Inside again, without a second DidEnterRegion.
        #expect(h.take().signals(to: client) == ["didDetermineState inside lobby"])
    }

    @Test func aRegionNotSeenAfterItsReceiverCameBackExitsOnce() throws {
        let (h, client) = try heardOnlyInTheKitchen()
        h.run(to: 10)
        h.feed(.fleet(.receiverOffline(Self.kitchen), room: "kitchen"))
        h.run(to: 600)
        _ = h.take()
        h.feed(.fleet(.receiverOnline(Self.kitchen), room: "kitchen"))
        h.run(to: 629.9)
        #expect(h.take().regionEvents.isEmpty, "a full exit_timeout to be seen")
        h.run(to: 700)
        #expect(h.take().signals(to: client) == ["didDetermineState outside lobby", "didExitRegion lobby"])
    }

    /// This node's own adapter hears the beacon too: the kitchen going offline changes nothing.
    @Test func aRegionThisNodeHearsIsNotTouched() throws {
        let (h, client) = try heardOnlyInTheKitchen()
        h.see()
        h.run(to: 10)
        h.feed(.fleet(.receiverOffline(Self.kitchen), room: "kitchen"))
        h.keepSeeing(until: 100)
        #expect(h.take().signals(to: client).isEmpty)
    }
}
