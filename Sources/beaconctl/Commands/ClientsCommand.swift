import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl clients`: the registered clients.
struct ClientsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "List registered clients: app, user, process, authorization, in use, regions, ranging.",
        discussion: """
            One row per client object (/org/beacond/client/N) from org.beacond.Admin1.ListClients. \
            Disconnected clients are listed while their Always monitoring continues.

            --json prints a JSON array of client objects: {"Path", "AppId", "Sender", "UnixUserID", \
            "ProcessID", "AuthorizationStatus", "InUse", "Connected", "MonitoredRegions", "RangedConstraints"}.

            Example: beaconctl clients --json | jq '.[].AppId'

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            let clients = try client.clients()
            if output.json {
                print(JSON(clients).text)
            } else if clients.isEmpty {
                print("no clients")
            } else {
                Reporting.printLines(StatusText.clients(clients).lines())
            }
        }
    }
}
