#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import ArgumentParser
import BeacondAPI
import BeaconctlKit

/// `beaconctl`: the administrator's command line, a D-Bus client of beacond.
@main
struct BeaconctlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beaconctl",
        abstract: "Inspect and administer beacond over D-Bus (\(BeacondBus.name)).",
        discussion: """
            Every command talks to beacond on the system bus unless --bus (or $\(BusChoice.environmentVariable)) \
            says otherwise: `--bus session`, or a D-Bus address such as `--bus unix:path=/tmp/test-bus`.

            Admin commands (status, beacons, regions, clients, events, auth, services, and doctor past its first \
            checks) call org.beacond.Admin1: they need root or membership of the admin group \
            (admin_group in /etc/beacond/beacond.toml, default \(AdminAccess.defaultGroup)). \
            `client` is an ordinary client: it needs only a user allowed by the app's declaration.

            Output is for people by default. --json prints the daemon's dictionaries with the same key names as \
            the D-Bus API (AppId, AuthorizationStatus, Regions, …), one JSON document per line; every timestamp \
            (µs since the Unix epoch) also gets an ISO-8601 sibling named <Key>ISO8601. Live commands (events, \
            beacons, client) print one object per event: {"Kind", "Time", "TimeISO8601", "Data"}. \
            Stdout is line-buffered and nothing is interactive, so every command can be driven from scripts.

            Examples:
              beaconctl status
              beaconctl --bus session events --count 5 --json
              beaconctl auth grant com.example.door always
              beaconctl doctor --app com.example.door

            \(ExitStatus.helpText)
            """,
        version: BeacondVersion.current,
        subcommands: [
            StatusCommand.self, BeaconsCommand.self, RegionsCommand.self, ClientsCommand.self,
            EventsCommand.self, AuthCommand.self, ServicesCommand.self, DoctorCommand.self,
            ClientCommand.self, CalibrateCommand.self, DevicesCommand.self, FloorplanCommand.self,
        ])

    /// Accepted here as well as after the subcommand (`beaconctl --bus session status`).
    @OptionGroup var bus: BusOptions

    static func main() async {
        // The live commands promise exit 0 on SIGINT/SIGTERM: take the signals over before anything else (argument
        // parsing, connecting), so one that comes early cannot find the default disposition and kill us with 143.
        if CommandLine.arguments.dropFirst().contains(where: { Self.liveCommands.contains($0) }) { Interruption.install() }
        // Scripts read our output as it happens (events, beacons), not when a block buffer fills.
        setvbuf(stdout, nil, _IOLBF, 0)
        await main(nil)
    }

    /// The commands that run until stopped (`Interruption`).
    static let liveCommands: Set<String> = ["client", "events", "beacons", "calibrate"]
}
