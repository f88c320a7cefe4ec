import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl services on|off`: the global location services switch.
struct ServicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "services",
        abstract: "Turn location services on or off for everyone.",
        discussion: """
            Calls org.beacond.Admin1.SetLocationServicesEnabled. Off makes every app effectively restricted \
            at once: monitoring and ranging stop and clients get AuthorizationChanged. On restores each app's \
            own authorization.

            Example: beaconctl services off

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @Argument(help: "on or off.") var state: Switch

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            try client.setLocationServicesEnabled(state == .on)
            print("location services: \(state.rawValue)")
        }
    }
}
