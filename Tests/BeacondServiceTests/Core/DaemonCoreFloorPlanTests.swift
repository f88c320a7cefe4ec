import BeaconKit
import Foundation
@testable import BeacondService
@testable import BeacondCore
import Fleet
import Testing

/// With floorplan.toml, rooms come from positions: a receiver need not be named after its room, and a room's region
/// follows where the beacon is on the plan (issue 41).
@Suite("daemon core: rooms from a floor plan")
struct DaemonCoreFloorPlanTests {
    typealias H = CoreHarness
    static let settings =
        CoreHarness.settings + """

            [mqtt]
            broker = "mqtt://localhost"
            room = "office"
            """
    /// A kitchen (x 0–5) and a living room (x 5–10); the nodes are named for what they are, not for their rooms.
    static let plan = """
        [floors.ground]

        [rooms.kitchen]
        points = [[0, 0], [5, 0], [5, 8], [0, 8]]

        [rooms.living_room]
        points = [[5, 0], [10, 0], [10, 8], [5, 8]]

        [receivers.fridge-node]
        x = 0.5
        y = 0.5
        z = 2.5
        [receivers.door-node]
        x = 0.5
        y = 7.5
        z = 2.5
        [receivers.tv-node]
        x = 9.5
        y = 0.5
        z = 2.5
        [receivers.sofa-node]
        x = 9.5
        y = 7.5
        z = 2.5
        """
    static let nodes: [(name: String, x: Double, y: Double)] = [
        ("fridge-node", 0.5, 0.5), ("door-node", 0.5, 7.5), ("tv-node", 9.5, 0.5), ("sofa-node", 9.5, 7.5),
    ]

    private func harness(plan: Bool, settings: String = Self.settings) throws -> (H, client: Int) {
        let files = try CoreFiles(settings: settings)
        if plan { try files.configuration.write(Self.plan, to: "floorplan.toml") }
        let h = try H(files: files)
        let receivers = Self.nodes.enumerated().map { index, node in
            ReceiverDirectory.Receiver(room: node.name, id: ReceiverID(rawValue: UInt32(index + 1)), online: true, lastReading: nil, readings: 0)
        }
        h.feed(.fleetStarted(FleetStart(room: "office", receivers: receivers, problem: nil)))
        let client = try h.register()
        try h.grant()
        try h.monitor(client, try H.region("sofa", room: "living_room"))
        _ = h.take()
        return (h, client)
    }

    /// Every node's reading of the beacon at (x, y) once a second for `seconds`, from the harness's time on.
    private func walk(_ h: H, x: Double, y: Double, seconds: Int) {
        for _ in 0..<seconds {
            h.run(to: h.now + .seconds(1))
            for (index, node) in Self.nodes.enumerated() {
                let distance = ((x - node.x) * (x - node.x) + (y - node.y) * (y - node.y) + 1.5 * 1.5).squareRoot()
                let rssi: Double = -59 - 27 * log10(distance)
                let reported = Int8(rssi.rounded())
                h.feed(
                    .fleet(
                        .sighting(
                            H.identity(), rssi: reported, distance: distance, by: ReceiverID(rawValue: UInt32(index + 1)),
                            measuredPower: -59, exactRSSI: rssi), room: node.name))
            }
        }
    }

    @Test("a room's region enters where the plan puts the beacon and exits when it walks into another room")
    func roomFromPosition() throws {
        let (h, client) = try harness(plan: true)
        walk(h, x: 8, y: 4, seconds: 3)
        #expect(h.take().signals(to: client).suffix(2) == ["didDetermineState inside sofa", "didEnterRegion sofa"])
        let position = h.core.clients.engine.presence?.position(of: H.identity())
        #expect((position?.x ?? 0) > 5 && position?.floor == "ground", "\(String(describing: position))")
        // Sightings placed in the kitchen do not keep it inside: it exits after the exit timeout (30 s).
        walk(h, x: 2, y: 4, seconds: 40)
        #expect(h.take().signals(to: client).contains("didExitRegion sofa"))
    }

    @Test("without the plan, no receiver is named living_room: the region never enters (the plan is what placed it)")
    func withoutThePlan() throws {
        let (h, client) = try harness(plan: false)
        walk(h, x: 8, y: 4, seconds: 3)
        #expect(!h.take().signals(to: client).contains("didEnterRegion sofa"))
        #expect(h.core.clients.engine.presence?.position(of: H.identity()) == nil)
    }

    @Test("Home Assistant on a node with no radio: the published beacon's tracker from others' readings, its position as attributes")
    func homeAssistantAttributes() throws {
        let settings = Self.settings + "\nhomeassistant = true\npublish = [\"\(H.uuid.uuidString)\"]\n"
        let (h, _) = try harness(plan: true, settings: settings)
        h.feed(.fleetConnection(true))
        walk(h, x: 8, y: 4, seconds: 4)
        let retained = DaemonCorePublishingTests.retained(h.take())
        let object = HomeAssistantDiscovery.objectID(H.identity())
        #expect(retained.contains { $0.topic.hasPrefix("homeassistant/device_tracker/beacond/beacond_office_\(object)") })
        let attributes = try #require(retained.last { $0.topic == "beacond/office/\(object)/attributes" }, "\(retained.map(\.topic))")
        let values = try #require(try JSONSerialization.jsonObject(with: Data(attributes.text.utf8)) as? [String: Any])
        #expect((values["x"] as? Double ?? 0) > 5 && values["floor"] as? String == "ground", "\(values)")
        #expect(values["room"] as? String == "living_room" && values["fixes"] as? Double == 4, "\(values)")
        #expect(retained.last { $0.topic == "beacond/office/\(object)/presence" }?.text == "living_room")
    }
}
