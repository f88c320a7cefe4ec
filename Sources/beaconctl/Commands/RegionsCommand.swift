import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl regions`: every monitored region with its state.
struct RegionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regions",
        abstract: "List monitored regions with their state and when they were last seen.",
        discussion: """
            One row per region a client monitors: app, identifier, UUID[:MAJOR[:MINOR]], state \
            (unknown|inside|outside), when a matching beacon was last seen, and the client object. \
            Read from org.beacond.Admin1.ListRegions, a page at a time.

            --json prints a JSON array of region objects: {"AppId", "Client", "Identifier", "UUID", "Major"?, \
            "Minor"?, "NotifyOnEntry", "NotifyOnExit", "State", "LastSeen" (µs, 0 = never), "LastSeenISO8601"}.

            Example:
              beaconctl regions --json |
                  jq '.[] | select(.State == "inside") | .Identifier'

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            let regions = try client.regions()
            if output.json {
                print(JSON(regions).text)
            } else if regions.isEmpty {
                print("no monitored regions")
            } else {
                Reporting.printLines(StatusText.regions(regions, now: TimeText.now()).lines())
            }
        }
    }
}
