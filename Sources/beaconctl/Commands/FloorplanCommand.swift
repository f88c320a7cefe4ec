import ArgumentParser
import BeaconKit
import BeaconctlKit
import Foundation

/// `beaconctl floorplan`: the floor plan beacond places beacons on (floorplan.toml(5), docs/position.md).
struct FloorplanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floorplan",
        abstract: "Import a floor plan already drawn for ESPresense-companion.",
        discussion: """
            beacond places every beacon its receivers hear on the floor plan in floorplan.toml (in the configuration \
            directory; see floorplan.toml in beacond.toml(5)): floors, rooms as polygons, receivers by their id on the \
            broker. `import` writes one from an ESPresense-companion config.yaml: its floors (bounds), rooms (points) \
            and nodes (point, floors) carry over; what cannot (a node that moves, a room beacond would refuse, \
            companion's own settings) is listed with its line. Talks to no daemon.

            Examples:
              beaconctl floorplan import /config/espresense/config.yaml --print
              beaconctl floorplan import config.yaml   # to /etc/beacond
              systemctl reload beacond

            \(ExitStatus.helpText)
            """,
        subcommands: [Import.self])

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write floorplan.toml from an ESPresense-companion config.yaml.",
            usage: """
                beaconctl floorplan import <config.yaml> [--config-dir <dir>]
                                           [--output <file>] [--print] [--force]
                """,
            discussion: "Refuses to replace an existing floorplan.toml unless --force. Node and room ids are "
                + "ESPresense's slugs of their names (\"Living Room\" is living_room), as the nodes' topics name them.")

        @Argument(help: ArgumentHelp("ESPresense-companion's configuration file.", valueName: "config.yaml"))
        var companionConfig: String
        @Option(help: ArgumentHelp("beacond's configuration directory: the plan goes to DIR/floorplan.toml.", valueName: "dir"))
        var configDir = "/etc/beacond"
        @Option(help: ArgumentHelp("Write the plan here instead.", valueName: "file"))
        var output: String?
        @Flag(help: "Print the plan instead of writing it (the notes on what was not carried go to stderr).")
        var print = false
        @Flag(help: "Replace the file if it exists.")
        var force = false

        func run() throws {
            try Reporting.run { () throws(BeaconctlError) in try importPlan() }
        }

        func importPlan() throws(BeaconctlError) {
            let text: String
            do {
                text = try String(contentsOfFile: companionConfig, encoding: .utf8)
            } catch {
                throw BeaconctlError(
                    exitStatus: ExitStatus.unavailable,
                    message: "cannot read \(companionConfig): \(error.localizedDescription) (companion keeps it in /config/espresense/config.yaml)")
            }
            let imported = try CompanionImport(yaml: text, file: companionConfig)
            let plan = imported.plan
            let header =
                [
                    "Imported from \(companionConfig) by beaconctl floorplan import. See floorplan.toml in beacond.toml(5).",
                    "\(plan.floors.count) floor(s), \(plan.rooms.count) room(s), \(plan.receivers.count) receiver(s).",
                ] + (imported.notes.isEmpty ? [] : ["Notes:"] + imported.notes.map { "  " + $0 })
            let toml = plan.toml(header: header)
            let notes = imported.notes.map { "note: " + $0 }
            if print {
                Swift.print(toml, terminator: "")
                for note in notes { FileHandle.standardError.write(Data((note + "\n").utf8)) }
                return
            }
            let file = output ?? (configDir.hasSuffix("/") ? configDir : configDir + "/") + "floorplan.toml"
            if output == nil {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: configDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw BeaconctlError(
                        exitStatus: ExitStatus.unavailable,
                        message: "the configuration directory \(configDir) does not exist: give beacond's (--config-dir, "
                            + "/etc/beacond unless beacond runs with another), or --output FILE")
                }
            }
            if FileManager.default.fileExists(atPath: file), !force {
                throw BeaconctlError(
                    exitStatus: ExitStatus.failure, message: "\(file) exists: give --force to replace it, or --print to see the plan")
            }
            do {
                try toml.write(toFile: file, atomically: true, encoding: .utf8)
            } catch {
                throw BeaconctlError(
                    exitStatus: ExitStatus.noPermission, message: "cannot write \(file): \(error.localizedDescription) (run as root)")
            }
            Swift.print(
                "wrote \(file): \(plan.floors.count) floor(s), \(plan.rooms.count) room(s), \(plan.receivers.count) receiver(s). "
                    + "Apply it: systemctl reload beacond (or kill -HUP a beacond run by hand)")
            for note in notes { Swift.print(note) }
        }
    }
}
