import BeaconKit
import BeacondCore
import BeacondService
import Foundation
import Testing

@Suite("floorplan.toml: floors, rooms as polygons, receivers at their places")
struct FloorPlanSettingsTests {
    /// A node on a broker: what a floor plan needs to place anything.
    static let fleet = "[mqtt]\nbroker = \"mqtt://localhost\"\nroom = \"office\"\n"

    static let twoFloors = """
        # A house: ground floor and upstairs.
        [floors.ground]
        name = "Ground floor"
        heights = [0, 2.8]
        bounds = [[0, 0], [12, 9]]

        [floors.upstairs]
        heights = [2.8, 5.6]
        tag_height = 0.8

        [rooms.kitchen]
        floor = "ground"
        name = "Kitchen"
        points = [[0, 0], [5, 0], [5, 4.5], [0, 4.5]]

        [rooms.living_room]
        floor = "ground"
        points = [[5, 0], [12, 0], [12, 9], [0, 9], [0, 4.5], [5, 4.5]]

        [rooms.bedroom]
        floor = "upstairs"
        points = [[0, 0], [6, 0], [6, 5], [0, 5]]

        [receivers.kitchen]
        x = 1
        y = 1
        z = 2.2
        rssi_offset = 4.5
        path_loss_exponent = 2.2

        [receivers.lounge-node]
        floor = "ground"
        x = 11
        y = 8

        [receivers.bedroom]
        x = 3
        y = 2.5
        z = 5
        """

    @Test("a plan is read: floors by their heights, rooms, receivers by id with their floor, height and calibration")
    func read() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(Self.twoFloors, to: "floorplan.toml")
        let configuration = try directory.load()
        let plan = try #require(configuration.floorPlan)
        #expect(plan.floors.map(\.id) == ["ground", "upstairs"])
        #expect(plan.floors[0].name == "Ground floor" && plan.floors[0].heights == 0..<2.8)
        #expect(plan.floors[1].tagHeight == 0.8 && plan.floors[1].bounds == nil)
        #expect(plan.rooms.map(\.id) == ["kitchen", "living_room", "bedroom"])
        #expect(plan.rooms[1].points.count == 6)
        #expect(plan.receivers.map(\.id) == ["kitchen", "lounge-node", "bedroom"])
        #expect(plan.receivers.map(\.floor) == ["ground", "ground", "upstairs"])
        // No z: two metres above its floor.
        #expect(plan.receivers[1].z == 2.0)
        #expect(plan.receivers[0].calibration == (try ReceiverCalibration(rssiOffset: 4.5, pathLossExponent: 2.2)))
        #expect(plan.receivers[1].calibration == nil)
        // The node named lounge-node stands in the living room.
        #expect(plan.room(ofReceiver: "lounge-node")?.id == "living_room")
        // Without [mqtt] nothing can place a beacon on it: said, not fatal.
        #expect(configuration.warnings.map(\.message).contains { $0.contains("[mqtt] broker is not set") }, "\(configuration.warnings)")
        try directory.write("[mqtt]\nbroker = \"mqtt://localhost\"\nroom = \"office\"\n", to: "beacond.toml")
        #expect(try directory.load().warnings.isEmpty)
    }

    @Test("no floorplan.toml: no plan (rooms as today); [rooms] floorplan names another file, relative to the directory")
    func whichFile() throws {
        let directory = try ConfigurationDirectory()
        #expect(try directory.load().floorPlan == nil)
        try directory.write(Self.twoFloors, to: "plans/house.toml")
        try directory.write("[rooms]\nfloorplan = \"plans/house.toml\"\n", to: "beacond.toml")
        #expect(try directory.load().floorPlan?.rooms.count == 3)
        try directory.write("[rooms]\nfloorplan = \"\(directory.path)/plans/house.toml\"\n", to: "beacond.toml")
        #expect(try directory.load().floorPlan?.rooms.count == 3)
        try directory.write("[rooms]\ndwell = 6\nfloorplan = \"plans/flat.toml\"\n", to: "beacond.toml")
        let error = try #require(directory.loadError())
        #expect(error.file == directory.settingsFile && error.line == 3)
        #expect(error.message.contains("plans/flat.toml does not exist"), "\(error)")
        #expect(error.fix?.contains("beaconctl floorplan import") == true)
    }

    /// The error `text` as floorplan.toml makes.
    static func error(_ text: String) throws -> ConfigurationError {
        let directory = try ConfigurationDirectory()
        try directory.write(text, to: "floorplan.toml")
        return try #require(directory.loadError())
    }

    @Test("bad plans: each error names the file, the line and the fix")
    func errors() throws {
        let floor = "[floors.g]\n"
        let crossing = try Self.error(floor + "[rooms.hall]\npoints = [[0, 0], [4, 4], [4, 0], [0, 4]]\n")
        #expect(crossing.file.hasSuffix("/floorplan.toml") && crossing.line == 3)
        #expect(crossing.message.contains("[rooms.hall] crosses itself"), "\(crossing)")
        #expect(crossing.fix?.contains("in order around the room") == true)

        let overlap = try Self.error(
            floor + "[rooms.a]\npoints = [[0, 0], [4, 0], [4, 4], [0, 4]]\n\n[rooms.b]\npoints = [[3, 3], [6, 3], [6, 6], [3, 6]]\n")
        #expect(overlap.line == 6 && overlap.message.contains("[rooms.b] overlaps [rooms.a]"), "\(overlap)")

        let unknownFloor = try Self.error(floor + "[rooms.a]\nfloor = \"cellar\"\npoints = [[0, 0], [4, 0], [4, 4]]\n")
        #expect(unknownFloor.line == 3 && unknownFloor.message.contains("floor \"cellar\", which the plan does not have"), "\(unknownFloor)")

        let twoFloors = "[floors.g]\nheights = [0, 3]\n[floors.up]\nheights = [3, 6]\n"
        let nowhere = try Self.error(twoFloors + "[receivers.attic]\nx = 1\ny = 1\nz = 7.5\n")
        #expect(nowhere.line == 5 && nowhere.message.contains("[receivers.attic] at height 7.5 m is on no floor"), "\(nowhere)")

        let noFloorSaid = try Self.error(twoFloors + "[rooms.hall]\npoints = [[0, 0], [4, 0], [4, 4]]\n")
        #expect(noFloorSaid.message.contains("does not say its floor"), "\(noFloorSaid)")

        let point = try Self.error(floor + "[rooms.a]\npoints = [[0, 0], [4, 0, 1], [4, 4]]\n")
        #expect(point.line == 3 && point.message.contains("point 2 of points: 3 numbers, but it takes 2"), "\(point)")

        let badID = try Self.error(floor + "[receivers.\"Kitchen Node\"]\nx = 1\ny = 1\n")
        #expect(badID.line == 2 && badID.message.contains("is not an id"), "\(badID)")

        let noFloors = try Self.error("[rooms.a]\npoints = [[0, 0], [4, 0], [4, 4]]\n")
        #expect(noFloors.message.contains("the floor plan has no floor"))

        let noX = try Self.error(floor + "[receivers.hall]\ny = 1\n")
        #expect(noX.line == 2 && noX.message.contains("[receivers.hall] has no x"), "\(noX)")

        let calibration = try Self.error(floor + "[receivers.hall]\nx = 1\ny = 1\npath_loss_exponent = 9\n")
        #expect(calibration.line == 5 && calibration.message.contains("[receivers.hall]"), "\(calibration)")

        let syntax = try Self.error(floor + "[rooms.a\n")
        #expect(syntax.line == 2, "\(syntax)")
    }

    @Test("every problem of a plan is said at once, in the file's order")
    func allProblems() throws {
        let error = try Self.error(
            "[floors.g]\n[rooms.b]\npoints = [[0, 0], [1, 0]]\n[rooms.a]\nfloor = \"x\"\npoints = [[0, 0], [4, 0], [4, 4]]\n")
        #expect(([error] + error.others).map(\.line) == [3, 5], "\(error)")
    }

    @Test("unknown keys are warnings at their line, with the likely key")
    func unknownKeys() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(Self.fleet, to: "beacond.toml")
        try directory.write("[floors.g]\n[rooms.a]\npoint = [[0, 0], [4, 0], [4, 4]]\npoints = [[0, 0], [4, 0], [4, 4]]\n", to: "floorplan.toml")
        let configuration = try directory.load()
        #expect(configuration.warnings.map(\.line) == [3])
        #expect(configuration.warnings.first?.message.contains("did you mean \"points\"?") == true)
    }

    /// The repository, found from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test("config/README.md's example plan and the real flat's shipped plan load with no warnings")
    func documentedPlans() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("config/README.md"), encoding: .utf8)
        let example = try #require(
            readme.components(separatedBy: "A one-floor flat:\n\n```toml\n").dropFirst().first?.components(separatedBy: "```").first)
        let directory = try ConfigurationDirectory()
        try directory.write(Self.fleet, to: "beacond.toml")
        try directory.write(example, to: "floorplan.toml")
        let configuration = try directory.load()
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        let plan = try #require(configuration.floorPlan)
        #expect(plan.room(ofReceiver: "kitchen-node")?.id == "kitchen" && plan.room(ofReceiver: "hall-node")?.id == "hall")

        let flat = try String(contentsOf: Self.repository.appendingPathComponent("examples/flat-calib2021/floorplan.toml"), encoding: .utf8)
        try directory.write(flat, to: "floorplan.toml")
        let real = try directory.load()
        #expect(real.warnings.isEmpty, "\(real.warnings)")
        #expect(real.floorPlan?.rooms.count == 5 && real.floorPlan?.receivers.count == 6)
    }
}
