import ArgumentParser
import BeacondService

/// `beacond`: the daemon and its offline tools.
@main
struct BeacondCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacond",
        abstract: "iBeacon ranging, region monitoring and Core Location-style authorization for Linux.",
        discussion: """
            beacond scans Bluetooth Low Energy advertisements, decodes iBeacon frames, ranges beacons \
            (smoothed RSSI, distance, proximity about once a second) and monitors beacon regions \
            (enter/exit), and serves them to authorized clients over D-Bus.

            `beacond replay` runs the same decoding and engine path on capture files (btmon, Android \
            HCI snoop logs, pcap/pcapng, hex lines), so it works on a machine with no radio.
            """,
        version: BeacondServiceInfo.version,
        subcommands: [Replay.self])
}
