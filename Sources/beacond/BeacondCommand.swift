public import ArgumentParser
import BeacondAPI
import BeacondService
import BeacondCore
public import DBus
public import Logging

/// `beacond`: the daemon (no subcommand) and its offline tool (`replay`).
@main
struct BeacondCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacond",
        abstract: "iBeacon ranging, region monitoring and Core Location-style authorization for Linux.",
        // Generated, it is one line of 192 columns.
        usage: """
            beacond [--bus <system|session|ADDRESS>] [--config-dir <DIR>]
                    [--state-dir <DIR>] [--log-level <log-level>]
                    [--scanner <auto|hci[:hciN]|bluez[:hciN]|replay:PATH|fifo:PATH>]
            beacond replay [<options>] <PATH> ...
            """,
        discussion: """
            Without a subcommand, beacond runs the daemon: it owns org.beacond on D-Bus, scans Bluetooth \
            Low Energy advertisements while some client monitors or ranges, and serves authorized clients \
            (see `beaconctl --help`). It is normally started by systemd (beacond.service).

            Files: CONFIG-DIR/beacond.toml (daemon settings), CONFIG-DIR/apps.d/*.toml (one app each), \
            CONFIG-DIR/devices.d/*.toml (the administrator's phones by their keys, `beaconctl devices import`), \
            CONFIG-DIR/calibration.toml (receivers' offsets, beacons' and phones' 1 m powers; `beaconctl \
            calibrate --write`), \
            STATE-DIR/state.sqlite (authorization decisions, monitored regions and their states, events queued for \
            apps without a client), STATE-DIR/lock (one beacond per state directory). SIGHUP reloads the \
            configuration; every broken \
            file is logged with its file and line and the previous configuration stays in force. SIGTERM \
            stops gracefully.

            Scanner sources (--scanner or [scanner] source): fifo:PATH reads hex HCI event lines from a \
            FIFO (created if missing), e.g. `echo "04 3e 2a 02 01 03 00 ..." > PATH`; replay:PATH plays a \
            capture (btsnoop, pcap, pcapng, hex lines) in real time; hci[:hciN] asks bluetoothd for LE \
            discovery and reads every advertising report from an HCI socket (needs CAP_NET_RAW); \
            bluez[:hciN] uses only bluetoothd's D-Bus reports (no capability needed); auto (the default) \
            picks hci when it may, else bluez. While the adapter or bluetoothd is gone, regions are unknown \
            (never exited) and scanning resumes by itself.

            `beacond replay` runs the same decoding and engine path on capture files, so it works on a \
            machine with no radio.

            Example (a private test setup):
              beacond --bus session --config-dir ./config \\
                  --state-dir /tmp/beacond --scanner fifo:/tmp/beacond.fifo

            Exit status: 0 stopped by SIGTERM/SIGINT; 1 could not start or lost the bus; 64 usage error; \
            78 (EX_CONFIG) a configuration file, or the replay: capture, is invalid at start.
            """,
        version: BeacondVersion.current,
        subcommands: [Replay.self])

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The bus to serve on: system, session, or a D-Bus address such as unix:path=/run/x.",
            valueName: "system|session|ADDRESS"))
    var bus: DBusBusAddress = .system

    @Option(name: .long, help: ArgumentHelp("Directory with beacond.toml and apps.d/.", valueName: "DIR"))
    var configDir: String = "/etc/beacond"

    @Option(name: .long, help: ArgumentHelp("Directory for durable state (decisions, regions, queued events).", valueName: "DIR"))
    var stateDir: String = "/var/lib/beacond"

    // A transform rather than ExpressibleByArgument: the argument parser shows the reason only for an error a
    // transform throws ("fifo: needs a path"), and a bare "invalid" would not say what to fix.
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Scanner source, overriding [scanner] source in beacond.toml.",
            valueName: "auto|hci[:hciN]|bluez[:hciN]|replay:PATH|fifo:PATH"),
        transform: { text in try ScannerSpec(parsing: text) })
    var scanner: ScannerSpec?

    @Option(name: .long, help: "Lowest log level written.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, level: level) }
        let logger = Logger(label: "beacond")
        try await DaemonRunner.run(
            options: DaemonOptions(
                bus: bus, configDirectory: configDir,
                stateDirectory: stateDir, scanner: scanner),
            logger: logger)
    }
}

extension DBusBusAddress: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
    public var defaultValueDescription: String { optionValue }
}

extension Logger.Level: @retroactive ExpressibleByArgument {
    // The order of severity, as --help lists them (not CaseIterable's order).
    public static var allValueStrings: [String] { ["trace", "debug", "info", "notice", "warning", "error", "critical"] }
}
