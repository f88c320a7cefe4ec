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
            scanner source and state with its Bluetooth adapters, the clients, the monitored regions (the first \
            \(StatusText.regionsShown); beaconctl regions lists every one) with their state and when a matching \
            beacon was last seen, authorization requests waiting for an administrator, the limits in force, and \
            configuration warnings. Calls org.beacond.Admin1.GetStatus and the paged List* methods.

            --json prints GetStatus's dictionary as one JSON object with the API's keys (Version, \
            LocationServicesEnabled, Scanning, Scanner, ScannerState, Adapters, Prompt, ClientCount, RegionCount, \
            Limits, ConfigDirectory, StateDirectory, StateError, Warnings, StartedAt (+ StartedAtISO8601), …) \
            plus the lists walked from Admin1's paged methods: Clients (ListClients), Regions (every one, \
            ListRegions), PendingRequests (ListPendingRequests), Apps (ListApps) and, with [mqtt], \
            MQTTReceivers (every other receiver on the broker, ListReceivers; the text shows the first \
            \(StatusText.receiversShown)).

            Example: beaconctl status --json | jq '.Regions[] | {Identifier, State}'

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            // The text shows the first regions (beaconctl regions lists them all) and receivers; JSON has every one.
            let status = try client.snapshot(
                regions: output.json ? .max : StatusText.regionsShown,
                receivers: output.json ? .max : StatusText.receiversShown)
            if output.json {
                print(JSON(status).text)
            } else {
                Reporting.printLines(StatusText.status(status, now: TimeText.now()))
            }
        }
    }
}
