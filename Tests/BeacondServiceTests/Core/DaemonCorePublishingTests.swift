import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Fleet
import Testing

/// With `[mqtt] homeassistant = true`, each beacon this receiver publishes gets Home Assistant entities, announced
/// at every connection and published by the node only (`FleetPublishing+Outbox`).
@Suite("daemon core: what this receiver publishes")
struct DaemonCorePublishingTests {
    typealias H = CoreHarness
    static let settings =
        CoreHarness.settings + """

            [mqtt]
            broker = "mqtt://localhost"
            room = "hall"
            publish = ["*"]
            homeassistant = true
            """

    static func readings(_ effects: [DaemonEffect]) -> [ESPresenseReading] {
        effects.compactMap {
            guard case .publishReading(let reading, _) = $0 else { return nil }
            return reading
        }
    }

    static func retained(_ effects: [DaemonEffect]) -> [HomeAssistantPresence.Publication] {
        effects.flatMap { effect -> [HomeAssistantPresence.Publication] in
            guard case .publishRetained(let publications) = effect else { return [] }
            return publications
        }
    }

    @Test func aSightingIsPublishedAndItsBeaconAnnouncedOnceConnected() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        #expect(h.take().scannerCommands == ["start"], "publishing needs the scanner")
        h.run(to: 1)
        h.see()
        var effects = h.take()
        #expect(Self.readings(effects).count == 1)
        #expect(Self.retained(effects).isEmpty, "not connected: nothing for Home Assistant yet")
        h.feed(.fleetConnection(true))
        effects = h.take()
        let topics = Self.retained(effects).map(\.topic)
        let object = HomeAssistantDiscovery.objectID(H.identity())
        #expect(topics.first == "homeassistant/binary_sensor/beacond/beacond_hall_connectivity/config")
        #expect(topics.filter { $0.contains(object) && $0.hasSuffix("/config") }.count == 3, "\(topics)")
        #expect(Self.retained(effects).first { $0.topic == "beacond/hall/\(object)/presence" }?.text == "home")
        // Within publish_interval: no second reading. The room locator now places the beacon in this receiver's
        // room, so the tracker and the room sensor say so (each once).
        h.run(to: 1.2)
        h.see()
        effects = h.take()
        #expect(Self.readings(effects).isEmpty)
        #expect(Self.retained(effects).map(\.text) == ["hall", "hall"], "\(Self.retained(effects))")
        h.run(to: 1.4)
        h.see()
        #expect(Self.retained(h.take()).isEmpty, "nothing changed, nothing is said again")
        // The connection lost: nothing is published until the next one, which announces everything again.
        h.feed(.fleetConnection(false))
        h.run(to: 40)
        #expect(Self.retained(h.take()).isEmpty, "not_home is not published while not connected")
        h.feed(.fleetConnection(true))
        #expect(Self.retained(h.take()).contains { $0.topic == "beacond/hall/\(object)/presence" && $0.text == "not_home" })
    }

    @Test func unseenForTheExitTimeoutTheTrackerSaysNotHomeOnItsOwnTimer() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        h.feed(.fleetConnection(true))
        h.run(to: 1)
        h.see()
        let object = HomeAssistantDiscovery.objectID(H.identity())
        #expect(h.core.outbox.armedTimers[.homeAssistant] == h.at(31))
        _ = h.take()
        h.run(to: 40)
        #expect(Self.retained(h.take()).contains { $0.topic == "beacond/hall/\(object)/presence" && $0.text == "not_home" })
        #expect(h.core.outbox.armedTimers[.homeAssistant] == nil)
    }

    @Test func whenTheScannerSeesAgainTheTrackersGetTheirExitTimer() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        h.feed(.fleetConnection(true))
        h.run(to: 1)
        h.see()
        // The adapter goes away: presence is unknown, and no exit may be timed while nothing can be seen.
        h.run(to: 5)
        h.feed(.scannerReported(.waiting("adapter off"), label: "hci0"))
        #expect(h.core.outbox.armedTimers[.homeAssistant] == nil)
        // It sees again and the beacon has gone: not_home exit_timeout later, on Home Assistant's own timer.
        h.run(to: 10)
        h.feed(.scannerReported(.scanning("hci0 through an HCI socket"), label: "hci0"))
        #expect(h.core.outbox.armedTimers[.homeAssistant] == h.at(40))
        _ = h.take()
        h.run(to: 41)
        let object = HomeAssistantDiscovery.objectID(H.identity())
        #expect(Self.retained(h.take()).contains { $0.topic == "beacond/hall/\(object)/presence" && $0.text == "not_home" })
    }

    @Test func aStoppedNodeTakesItsPublishingAndItsTimerWithIt() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        h.feed(.fleetConnection(true))
        h.run(to: 1)
        h.see()
        #expect(h.core.outbox.armedTimers[.homeAssistant] != nil)
        _ = h.take()
        h.feed(.fleetStopped(receivers: []))
        #expect(h.take().has { if case .cancel(.homeAssistant) = $0 { true } else { false } })
        h.run(to: 2)
        h.see()
        #expect(Self.readings(h.take()).isEmpty && !h.core.publishing.publishesHomeAssistant)
    }
}
