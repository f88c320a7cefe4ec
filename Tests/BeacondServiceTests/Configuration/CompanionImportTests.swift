import BeaconKit
import BeaconctlKit
import BeacondCore
import BeacondService
import Foundation
import Testing

/// `beaconctl floorplan import`: what users drew for ESPresense-companion becomes a floorplan.toml the daemon reads.
@Suite("floorplan import: ESPresense-companion's config.yaml")
struct CompanionImportTests {
    /// Shaped as companion's config.yaml: two floors with bounds, rooms closed by repeating their first corner, nodes by
    /// name with a point and floors, one that moves, one outside its floor, one room overlapping another.
    static let companion = """
        mqtt:
          host: broker.local
        timeout: 30
        floors:
          - id: ground
            name: Ground Floor
            bounds: [[0, 0, 0], [12, 9, 2.8]]
            rooms:
              - name: Living Room
                points:
                  - [0, 0]
                  - [6, 0]
                  - [6, 5]
                  - [0, 5]
                  - [0, 0]
              - name: Kitchen
                points: [[6, 0], [12, 0], [12, 5], [6, 5]]
              - name: Pantry
                points: [[5, 4], [8, 4], [8, 6], [5, 6]]
          - id: upstairs
            name: Upstairs
            bounds: [[0, 0, 2.8], [12, 9, 5.6]]
            rooms:
              - id: bedroom
                name: Main Bedroom
                points: [[0, 0], [6, 0], [6, 5], [0, 5]]
        nodes:
          - name: Living Room
            point: [0.5, 0.5, 1.2]
            floors: ["ground"]
          - name: Kitchen Node
            point: [11, 4, 2.0]
            floors: ["ground"]
          - name: Stairs
            point: [6, 6, 3.5]
            floors: ["ground", "upstairs"]
          - name: Car
            stationary: false
            point: [20, 3, 0.5]
            floors: ["ground"]
          - name: Garden
            point: [15, 3, 0.5]
            floors: ["ground"]
          - id: porch-node
            name: Porch
            point: [1, 8, 2]
            floors: ["ground"]
          - name: "A node whose name is far too long to be any topic's room, longer than sixty-four characters"
            point: [2, 8, 2]
            floors: ["ground"]
        """

    @Test("floors, rooms and nodes carry over by their slugs; what cannot is said at its line; the daemon reads the result")
    func imports() throws {
        let imported = try CompanionImport(yaml: Self.companion, file: "config.yaml")
        let plan = imported.plan
        #expect(plan.floors.map(\.id) == ["ground", "upstairs"])
        #expect(plan.floors[0].heights == 0..<2.8 && plan.floors[1].heights == 2.8..<5.6)
        #expect(plan.rooms.map(\.id) == ["living_room", "kitchen", "bedroom"])
        #expect(plan.rooms[0].points.count == 4 && plan.rooms[0].name == "Living Room")
        // An id written as such is kept (it is the node's topics' name); a name is slugged; one too long is not carried.
        #expect(plan.receivers.map(\.id) == ["living_room", "kitchen_node", "stairs", "porch-node"])
        // A node on two floors goes on the one its height is in.
        #expect(plan.receivers[2].floor == "upstairs")
        let notes = imported.notes.joined(separator: "\n")
        #expect(notes.contains("config.yaml: mqtt, timeout not carried"), "\(notes)")
        #expect(notes.contains("config.yaml:18: room pantry not carried: [rooms.pantry] overlaps [rooms.living_room]"), "\(notes)")
        #expect(notes.contains("config.yaml:37: node car is not stationary"), "\(notes)")
        #expect(notes.contains("config.yaml:41: node garden not carried: [receivers.garden] at (15, 3) is outside floor ground's bounds"), "\(notes)")
        #expect(notes.contains("config.yaml:34: node stairs is listed on ground and upstairs: placed on upstairs"), "\(notes)")
        #expect(notes.contains("config.yaml:48: a node with no usable id or name"), "\(notes)")

        let directory = try ConfigurationDirectory()
        try directory.write(FloorPlanSettingsTests.fleet, to: "beacond.toml")
        try directory.write(plan.toml(header: ["imported"]), to: "floorplan.toml")
        let configuration = try directory.load()
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        #expect(configuration.floorPlan == plan)
        #expect(configuration.floorPlan?.room(ofReceiver: "kitchen_node")?.id == "kitchen")
    }

    @Test("no YAML, no floors, or floors without heights: an error that says why, and nothing written")
    func refusals() {
        func message(_ text: String) -> String {
            do {
                _ = try CompanionImport(yaml: text, file: "config.yaml")
                return "imported"
            } catch {
                return error.message
            }
        }
        #expect(message("floors: [").contains("config.yaml is not YAML"))
        #expect(message("mqtt:\n  host: x\n").contains("config.yaml has no floors to carry"))
        #expect(message("- 1\n- 2\n").contains("the top level is not a mapping"))
        #expect(message("floors:\n  - id: a\n  - id: b\n").contains("floors a, b have no heights"))
    }
}
