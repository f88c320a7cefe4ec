import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl status`: everything `Admin1.GetStatus` says.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show beacond's state: version, location services, scanner, clients, regions, pending requests.",
        discussion: """
            Prints the daemon version and uptime, whether location services are on, the prompt policy, the \
            scanner source and state with its Bluetooth adapters, the connected clients, every monitored region \
            with its state and when a matching beacon was last seen, authorization requests waiting for an \
            administrator, and configuration warnings. Calls org.beacond.Admin1.GetStatus.

            --json prints GetStatus's dictionary as one JSON object with the API's keys: Version, \
            LocationServicesEnabled, Scanning, Scanner, ScannerState, Adapters, Prompt, Clients, Regions, \
            PendingRequests, Apps, ConfigDirectory, StateDirectory, StateError, Warnings, StartedAt (+ StartedAtISO8601).

            Example: beaconctl status --json | jq '.Regions[] | {Identifier, State}'

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            let status = try client.status()
            if output.json {
                print(JSON(status).text)
            } else {
                Reporting.printLines(StatusText.status(status, now: TimeText.now()))
            }
        }
    }
}
