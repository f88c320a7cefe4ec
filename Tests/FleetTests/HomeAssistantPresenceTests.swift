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

    @Test("a published beacon's position goes out as its tracker's attributes when it changes, and again after a reconnection")
    func attributes() throws {
        var presence = try presence()
        _ = presence.connected(placement: Self.unplaced)
        let identity = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2)
        let position = Position(x: 2, y: 3, z: 1, floor: "ground", accuracy: 1.5, fixes: 3)
        // Not published (no entity): nothing.
        #expect(presence.attributes(of: identity, position: position, room: .room("kitchen"), at: start).isEmpty)
        _ = presence.observe(sighting(at: start), published: true, at: start, placement: Self.unplaced)
        let first = presence.attributes(of: identity, position: position, room: .room("kitchen"), at: start)
        #expect(first.map(\.topic) == ["beacond/hall/\(objectID(2))/attributes"])
        #expect(first.first?.text.contains("\"room\":\"kitchen\"") == true)
        // The same position again: nothing; a new one: published.
        #expect(presence.attributes(of: identity, position: position, room: .room("kitchen"), at: start + .seconds(1)).isEmpty)
        var moved = position
        moved.x = 2.5
        #expect(
            presence.attributes(of: identity, position: moved, room: .unknown, at: start + .seconds(2)).first?.text.contains("\"room\":\"\"") == true)
        presence.disconnected()
        #expect(presence.attributes(of: identity, position: position, room: .unknown, at: start + .seconds(3)).isEmpty)
        _ = presence.connected(placement: Self.unplaced)
        #expect(presence.attributes(of: identity, position: moved, room: .unknown, at: start + .seconds(4)).count == 1)
    }

    @Test("a node with no radio of its own: a beacon it publishes gets its entities from another receiver's reading")
    func discoveredFromTheFleet() throws {
        var presence = try presence()
        _ = presence.connected(placement: Self.unplaced)
        let identity = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2)
        let reading = ReceiverDirectory.Input.sighting(identity, rssi: -60, distance: 1.5, by: ReceiverID(rawValue: 1))
        // Not one this node publishes: no entity.
        #expect(presence.fleetInput(reading, at: start, placement: { _ in .room("kitchen") }).isEmpty)
        let published = presence.fleetInput(reading, at: start, placement: { _ in .room("kitchen") }, discovers: { $0 == identity })
        #expect(published.contains { $0.topic == "homeassistant/device_tracker/beacond/beacond_hall_\(objectID(2))/config" })
        #expect(published.last { $0.topic == "beacond/hall/\(objectID(2))/presence" }?.text == "kitchen")
        #expect(presence.discovered == [identity])
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
