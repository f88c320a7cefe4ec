import ArgumentParser
import BeacondAPI

/// `beaconctl`: the administrator's command line, a D-Bus client of beacond.
@main
struct BeaconctlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beaconctl",
        abstract: "Inspect and administer beacond over D-Bus (\(BeacondBus.name)).",
        discussion: """
            The D-Bus commands (status, beacons, regions, clients, events, auth, services, doctor, client) \
            arrive with the daemon; this build has none yet. To see beacon decoding, ranging and monitoring \
            today, run `beacond replay --help`.
            """,
        version: "0.1.0")
}
