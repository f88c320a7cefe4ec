import BeaconKit
import BeaconctlKit
import Foundation
import TestKit
import Testing

/// `beaconctl floorplan import` as a user runs it.
@Suite("beaconctl floorplan import")
struct FloorplanImportTests {
    static let companion = """
        floors:
          - id: flat
            name: "The \\u001b[2Jflat\\u0007"
            bounds: [[0, 0, 0], [10, 8, 3]]
            rooms:
              - name: "Kitchen \\u001b]0;owned\\u0007"
                points: [[0, 0], [5, 0], [5, 8], [0, 8]]
              - name: Hall
                points: [[5, 0], [10, 0], [10, 8], [5, 8]]
        nodes:
          - name: Kitchen
            point: [1, 1, 2]
            floors: ["flat"]
        """

    @Test("writes floorplan.toml into the configuration directory, refuses to replace it, prints it on request")
    func writes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("floorplan-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let yaml = directory + "/config.yaml"
        try Data(Self.companion.utf8).write(to: URL(fileURLWithPath: yaml))

        let written = try CLI.run(["floorplan", "import", yaml, "--config-dir", directory])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(
            written.stdout.contains("wrote \(directory)/floorplan.toml: 1 floor(s), 2 room(s), 1 receiver(s). Apply it: systemctl reload beacond"))
        let text = try String(contentsOfFile: directory + "/floorplan.toml", encoding: .utf8)
        #expect(text.contains("[rooms.kitchen_0_owned]") && text.contains("[rooms.hall]") && text.contains("[receivers.kitchen]"), "\(text)")
        // Names drawn by someone else reach the file escaped, never as terminal controls.
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(text.contains(#"name = "Kitchen \u001B]0;owned\u0007""#), "\(text)")

        let again = try CLI.run(["floorplan", "import", yaml, "--config-dir", directory])
        #expect(again.status == 1 && again.stderr.contains("floorplan.toml exists: give --force to replace it"))
        let forced = try CLI.run(["floorplan", "import", yaml, "--config-dir", directory, "--force"])
        #expect(forced.status == 0)
        let printed = try CLI.run(["floorplan", "import", yaml, "--print"])
        #expect(printed.status == 0 && printed.stdout.contains("[floors.flat]"))

        let missing = try CLI.run(["floorplan", "import", directory + "/nothing.yaml", "--print"])
        #expect(missing.status == 69 && missing.stderr.contains("cannot read"), "\(missing.status) \(missing.stderr)")
        let nowhere = try CLI.run(["floorplan", "import", yaml, "--config-dir", directory + "/absent"])
        #expect(nowhere.status == 69 && nowhere.stderr.contains("does not exist"))
    }
}
