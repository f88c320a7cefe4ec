import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl regions`: every monitored region with its state.
struct RegionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regions",
        abstract: "List monitored regions with their state and when they were last seen.",
        discussion: """
            One row per region a client monitors: app, identifier, constraint, state \
            (unknown|inside|outside), when a matching beacon was last seen, and the client object. The \
            constraint is UUID[:MAJOR[:MINOR]] for an iBeacon, altbeacon:ID1[:ID2[:ID3]], \
            eddystone:NAMESPACE[:INSTANCE], or device:NAME for a phone known by its key (docs/devices.md). \
            Read from org.beacond.Admin1.ListRegions, a page at a time.

            --json prints a JSON array of region objects: {"AppId", "Client", "Identifier", "Kind"? (absent for \
            an iBeacon; "AltBeacon", "Eddystone", "PrivateDevice"), "UUID"? (iBeacon, AltBeacon id1), "Major"?, \
            "Minor"?, "Namespace"?, "Instance"? (Eddystone), "Device"? (a phone's name), "NotifyOnEntry", \
            "NotifyOnExit", "State", "LastSeen" (µs, 0 = never), "LastSeenISO8601"}, with the region's other \
            keys (Room, EntryDelay, ExitDelay, EnterRSSI, AbsentRSSI) when it has them.

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
