import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl events`: the daemon's live event stream.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print beacond's events as they happen, one line each.",
        // Generated, it is 83 columns wide.
        usage: """
            beaconctl events [--json] [--count <count>]
                      [--bus <system|session|ADDRESS>]
            """,
        discussion: """
            Subscribes with org.beacond.Admin1.WatchEvents and prints every Event(kind, data) signal: client \
            registrations, authorization requests and changes, region entries and exits, ranging cycles, \
            scanner and configuration changes. A line shows the time, the kind, the app and the data that \
            matters for the kind. Stops on SIGINT/SIGTERM (after UnwatchEvents) or after --count events; \
            exits 69 if beacond leaves the bus.

            --json prints one JSON object per line (JSON Lines): \
            {"Kind": "DidEnterRegion", "Time": µs, "TimeISO8601": "…Z", "Data": {"AppId": …, "Client": …, \
            "Region": {…}}}; Data is the event's dictionary with the API's keys.

            Examples:
              beaconctl events
              beaconctl events --json --count 1 | jq .Data.Region

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions
    // Unconditional: `--count -1` is refused as a count below 1, not taken for an option and called missing.
    @Option(parsing: .unconditional, help: "Exit after this many events.") var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1 (got \(count))") }
    }

    func run() throws {
        Interruption.install()
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            let loop = try SignalLoop(client: client)
            try client.watchEvents()
            let offset = TimeText.localOffset(at: TimeText.now())
            var printed = 0
            _ = try loop.run { signal throws(BeaconctlError) in
                guard case .event(let kind, let data) = signal else { return true }
                let time = EventText.time(of: data, received: TimeText.now())
                Reporting.printLine(
                    output.json
                        ? EventText.json(kind: kind, data: data, time: time).text
                        : EventText.line(kind: kind, data: data, time: time, utcOffset: offset))
                printed += 1
                return count.map { printed < $0 } ?? true
            }
            client.timeout = .seconds(2)
            try? client.unwatchEvents()
        }
    }
}
