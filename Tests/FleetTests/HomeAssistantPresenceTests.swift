import BeaconKit
import Fleet
import Foundation
import Testing

@Suite("Home Assistant presence")
struct HomeAssistantPresenceTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    let start = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)

    func presence() throws -> HomeAssistantPresence {
        HomeAssistantPresence(
            discovery: HomeAssistantDiscovery(prefix: "homeassistant", room: "hall", version: "0.3.0"),
            monitoring: try MonitoringConfiguration())
    }

    func sighting(minor: UInt16 = 2, at time: Timestamp) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: BeaconIdentity(uuid: Self.uuid, major: 1, minor: minor), measuredPower: -59),
            rssi: -65, address: BluetoothAddress(rawValue: 0xC1D2E3F4A5B6), addressType: 0, timestamp: time)
    }

    static let unplaced: @Sendable (BeaconIdentity) -> SightingRoom = { _ in .unplaced }

    func objectID(_ minor: UInt16) -> String {
        HomeAssistantDiscovery.objectID(BeaconIdentity(uuid: Self.uuid, major: 1, minor: minor))
    }

    @Test func eachPublishedBeaconIsAnnouncedOnceAndItsTrackerSaidOnlyWhenItChanges() throws {
        var presence = try presence()
        var published = presence.connected(placement: Self.unplaced)
        #expect(published.map(\.topic) == ["homeassistant/binary_sensor/beacond/beacond_hall_connectivity/config"])
        // Beacon 1/2 three times, each chosen for publishing, then beacon 1/3 once.
        for step in 0..<3 {
            published += presence.observe(
                sighting(at: start + .milliseconds(1100 * step)), published: true, at: start + .milliseconds(1100 * step),
                placement: Self.unplaced)
        }
        published += presence.observe(sighting(minor: 3, at: start + .seconds(4)), published: true, at: start + .seconds(4), placement: Self.unplaced)
        let first = objectID(2)
        let configs = published.map(\.topic).filter { $0.hasPrefix("homeassistant/") && $0.contains(first) }
        #expect(
            configs.sorted() == [
                "homeassistant/device_tracker/beacond/beacond_hall_\(first)/config",
                "homeassistant/sensor/beacond/beacond_hall_\(first)_distance/config",
                "homeassistant/sensor/beacond/beacond_hall_\(first)_room/config",
            ], "\(configs)")
        #expect(published.map(\.topic).filter { $0.hasPrefix("homeassistant/") && $0.contains(objectID(3)) }.count == 3)
        // Unknown when announced, then inside; no room can be said without rooms: `home`, said once.
        let tracker = published.filter { $0.topic == "beacond/hall/\(first)/presence" }.map(\.text)
        #expect(tracker == ["None", "home"], "\(tracker)")
    }

    @Test func aSightingNotChosenForPublishingGivesNoEntity() throws {
        var presence = try presence()
        _ = presence.connected(placement: Self.unplaced)
        let published = presence.observe(sighting(at: start), published: false, at: start, placement: Self.unplaced)
        #expect(published.isEmpty && presence.discovered.isEmpty)
    }

    @Test func whileDisconnectedNothingIsPublishedAndTheNextConnectionAnnouncesEverythingAgain() throws {
        var presence = try presence()
        // Discovered before any connection: remembered, not published.
        #expect(presence.observe(sighting(at: start), published: true, at: start, placement: Self.unplaced).isEmpty)
        let announced = presence.connected(placement: Self.unplaced)
        #expect(announced.count == 1 + 3 + 2, "receiver, the beacon's three entities, its tracker and room: \(announced.map(\.topic))")
        presence.disconnected()
        #expect(presence.observe(sighting(at: start + .seconds(2)), published: true, at: start + .seconds(2), placement: Self.unplaced).isEmpty)
        // Every entity and state again, not only what changed.
        #expect(presence.connected(placement: Self.unplaced) == announced)
    }

    @Test func theTrackerShowsTheRoomThePlacementGivesAndGoesNotHomeAfterTheExitTimeout() throws {
        var presence = try presence()
        _ = presence.connected(placement: Self.unplaced)
        let kitchen: (BeaconIdentity) -> SightingRoom = { _ in .room("kitchen") }
        let published = presence.observe(sighting(at: start), published: true, at: start, placement: kitchen)
        let topic = "beacond/hall/\(objectID(2))/presence"
        #expect(published.filter { $0.topic == topic }.map(\.text) == ["None", "kitchen"])
        let deadline = try #require(presence.nextDeadline)
        let exited = presence.advance(to: deadline, placement: kitchen)
        #expect(exited.filter { $0.topic == topic }.map(\.text) == ["not_home"], "\(exited)")
        #expect(exited.filter { $0.topic == "beacond/hall/\(objectID(2))/room" }.map(\.text) == ["not_home"])
    }
}
