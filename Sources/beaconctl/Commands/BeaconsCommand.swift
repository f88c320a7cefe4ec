#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl beacons`: a live ranging table built from the daemon's DidRangeBeacons events.
struct BeaconsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacons",
        abstract: "Show the beacons clients are ranging, live.",
        discussion: """
            Subscribes with org.beacond.Admin1.WatchEvents and shows every DidRangeBeacons cycle (about one a \
            second per ranging client and constraint): the beacon (its UUID for an iBeacon; altbeacon:ID1:ID2:ID3, \
            eddystone:NAMESPACE:INSTANCE or device:NAME for the other kinds), major, minor (iBeacon and \
            AltBeacon; "-" otherwise), RSSI (0 = not heard this cycle), \
            accuracy in metres, proximity, and the app ranging; with [mqtt] also the beacon's room (ROOM) and \
            the receiver whose reading gave its RSSI and accuracy (RECEIVER: the daemon's own room, or the \
            nearest receiver when only others heard it). On a terminal the table is redrawn each cycle; \
            otherwise each beacon is printed as a plain line. Beacons appear only while some client ranges \
            (try: beaconctl client --app APP range UUID).

            --once prints the first cycle and exits. --json prints each cycle as one JSON object \
            (the DidRangeBeacons event: {"Kind", "Time", "TimeISO8601", "Data": {"AppId", "Client", \
            "Constraint", "Beacons": [{"Kind"? (absent for an iBeacon), "UUID"?, "Major"?, "Minor"?, \
            "Namespace"?, "Instance"?, "Device"?, "RSSI", "Accuracy", "Proximity", "TxPower", "Timestamp", \
            "TimestampISO8601", with Eddystone-TLM "BatteryMillivolts"? and "Temperature"?, with [mqtt] also \
            "Room", "Receivers", "Receiver"}]}}).

            Example: beaconctl beacons --once --json | jq '.Data.Beacons[0].Accuracy'

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions
    @Flag(help: "Print the first ranging cycle and exit.") var once = false

    func run() throws {
        Interruption.install()
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            let loop = try SignalLoop(client: client)
            try client.watchEvents()
            let ranging = try client.clients().compactMap { $0.integer(BeacondClientKey.rangedConstraints) }.reduce(0, +)
            if ranging == 0 {
                Reporting.printError(
                    "no client is ranging yet; beacons appear once one does "
                        + "(try: beaconctl client --app APP range UUID)")
            }
            let terminal = isatty(STDOUT_FILENO) == 1 && !output.json
            let offset = TimeText.localOffset(at: TimeText.now())
            var table = RangingTable()
            _ = try loop.run { signal throws(BeaconctlError) in
                guard case .event(let kind, let data) = signal,
                    let cycle = RangingTable.Cycle(kind: kind, data: data, received: TimeText.now())
                else { return true }
                if output.json {
                    Reporting.printLine(EventText.json(kind: kind, data: data, time: cycle.time).text)
                } else if terminal {
                    table.update(cycle)
                    // Home and clear, then the whole table: one redraw per cycle.
                    print("\u{1B}[H\u{1B}[2J", terminator: "")
                    Reporting.printLines(table.lines(now: cycle.time, utcOffset: offset))
                } else {
                    Reporting.printLines(RangingTable.plainLines(cycle, utcOffset: offset))
                }
                return !once
            }
            client.timeout = .seconds(2)
            try? client.unwatchEvents()
        }
    }
}
