import ArgumentParser
import BeaconKit
import BeaconLocation
import BeaconctlKit
import BeacondAPI
import Foundation

/// `beaconctl client`: a sample client of org.beacond.Manager1 / LocationManager1, for demos and tests.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Run a sample client: register as an app, request authorization, monitor or range, print events.",
        // Generated, it is 86 columns wide.
        usage: """
            beaconctl client --app <app> monitor|range
                      <UUID[:MAJOR[:MINOR]][@ROOM]> [<options>]
            """,
        discussion: """
            Does what a client program does: RegisterClient(APP) on org.beacond.Manager1, prints \
            AuthorizationChanged, requests authorization (Always for monitor, WhenInUse for range; override \
            with --always or --when-in-use) and prints the result. If the request waits for an administrator \
            (prompt = "admin"), it says so and waits for `beaconctl auth grant APP …`. Then it calls \
            StartMonitoring({Identifier, UUID, Major?, Minor?}) or StartRanging({UUID, Major?, Minor?}) and \
            prints every signal until SIGINT/SIGTERM or --count region/ranging events (DidEnterRegion, \
            DidExitRegion, DidDetermineState, DidRangeBeacons).

            On the way out it stops what it started, and nothing else: StopMonitoring for its region if its \
            StartMonitoring succeeded (not with --keep-monitoring, which leaves Always monitoring running in the \
            daemon), StopRanging if its StartRanging succeeded. A call that failed (StartMonitoring refused, or \
            answered StateNotSaved: in effect, not saved) is not undone. Then Close() detaches the client: the \
            app's other regions, those it took over at registration among them, keep running. With \
            --keep-monitoring it does not call Close(); the end of its connection detaches it the same way.

            A refusal from beacond (org.beacond.Error.*) is printed as `beaconctl: <message>`; the message says \
            the fix. MonitoringDidFail/RangingDidFail end the command the same way.

            It runs on the BeaconLocation client library (docs/clients.md), and so survives a restart of beacond: \
            when beacond leaves the bus it says so and waits; when beacond is back it registers again (a new \
            ClientRegistered, after `beacond is back: registered again as PATH`), which takes the app's regions \
            over with their state, and its ranging is started again. If beacond is not running when the command \
            starts, the bus is asked to start it (D-Bus activation); if it cannot, the command exits 69.

            Lines come in the order beacond sent what they show: ClientRegistered first; a signal beacond sent \
            before it answered one of the command's calls is printed before what the command prints of its result \
            (so the AuthorizationChanged that follows registration comes before AuthorizationRequested, \
            the request's result).

            --json prints one JSON object per line, shaped as `beaconctl events --json` prints events \
            ({"Kind", "Time", "TimeISO8601", "Data"} with Data.AppId and Data.Client), starting with \
            {"Kind": "ClientRegistered"}; the request's result is {"Kind": "AuthorizationRequested", "Data": \
            {"Request", "Status"}}.

            Examples:
              UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
              beaconctl client --app com.example.door monitor $UUID:1 --identifier door
              beaconctl client --app com.example.door range $UUID --count 3 --json
              beaconctl client --app com.example.door monitor $UUID:1:2@kitchen \\
                  --entry-delay 10
              beaconctl client --app com.example.door monitor \\
                  eddystone:edd1ebeac04e5defa017 --identifier tags
              beaconctl client --app com.example.door range device:alice-phone

            UUID:MAJOR:MINOR@ROOM (monitor, with [mqtt]): the region is inside only while its beacon is in that \
            room, as the receivers place it (beaconctl status lists the receivers' rooms).

            Needs a unix user that the app's declaration (/etc/beacond/apps.d/APP.toml, users = [...]) allows; \
            not the admin group (except to grant a pending request from another terminal).

            \(ExitStatus.helpText)
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case monitor, range
    }

    /// Which authorization to request, overriding the action's default.
    enum Level: EnumerableFlag {
        case always, whenInUse

        static func help(for value: Level) -> ArgumentHelp? {
            switch value {
            case .always: return "Request Always authorization (the default for monitor)."
            case .whenInUse: return "Request WhenInUse authorization (the default for range)."
            }
        }
    }

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "The app id to register as (declared in /etc/beacond/apps.d).") var app: String
    @Argument(help: "monitor (region entry/exit) or range (beacons about once a second).") var action: Action
    @Argument(
        help: ArgumentHelp(
            "Which beacons: an iBeacon's UUID, optionally with major and minor (decimal); "
                + "altbeacon:ID1[:ID2[:ID3]], eddystone:NAMESPACE[:INSTANCE] or device:NAME for the other kinds "
                + "(docs/devices.md); for monitor, @ROOM: inside only while the beacon is in that room.",
            valueName: "UUID[:MAJOR[:MINOR]][@ROOM]"))
    var constraint: String
    @Option(help: "The region identifier for monitor (default: the constraint text).") var identifier: String?
    @Option(
        help: ArgumentHelp(
            "For monitor: seconds the beacon must be heard before the region is entered.",
            valueName: "seconds"))
    var entryDelay: Double?
    @Option(
        help: ArgumentHelp(
            "For monitor: seconds of silence that exit this region (instead of the daemon's exit).",
            valueName: "seconds"))
    var exitDelay: Double?
    @Flag var level: Level?
    @Option(parsing: .unconditional, help: "Exit after this many region/ranging events.") var count: Int?
    @Flag(help: "After StartMonitoring, call RequestState for an immediate DidDetermineState.") var requestState = false
    @Flag(help: "On exit, leave monitoring running in the daemon (Always: events are queued for the app).")
    var keepMonitoring = false

    func validate() throws {
        do {
            let spec = try RegionSpec(parsing: constraint)
            if spec.room != nil, action == .range {
                throw ValidationError("@\(spec.room ?? "") applies to monitor only: ranging reports every beacon with its Room")
            }
        } catch let error as RegionSpec.Invalid {
            throw ValidationError(error.description)
        }
        if action == .range, entryDelay != nil || exitDelay != nil {
            throw ValidationError("--entry-delay and --exit-delay apply to monitor only")
        }
        for (name, value, lowest) in [("--entry-delay", entryDelay, 0.0), ("--exit-delay", exitDelay, 0.1)] {
            if let value, !(value.isFinite && value >= lowest && value <= 86_400) {
                throw ValidationError("\(name) must be \(lowest == 0 ? "0" : "0.1") to 86400 seconds, got \(value)")
            }
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1 (got \(count))") }
        if action == .range {
            if identifier != nil { throw ValidationError("--identifier applies to monitor only (ranging has no identifier)") }
            if requestState { throw ValidationError("--request-state applies to monitor only") }
            if keepMonitoring { throw ValidationError("--keep-monitoring applies to monitor only") }
        }
        if identifier?.isEmpty == true { throw ValidationError("--identifier must not be empty") }
    }

    func run() async throws {
        Interruption.install()
        let spec: RegionSpec
        do {
            spec = try RegionSpec(parsing: constraint)
        } catch {
            Reporting.printError(error.description)
            throw ExitCode(ExitStatus.usage)
        }
        let constraint: BeaconLocation.BeaconIdentityConstraint
        do {
            constraint = try Self.libraryConstraint(spec.constraint)
        } catch {
            Reporting.printError(error.message)
            throw ExitCode(ExitStatus.usage)
        }
        let work: SampleClientRun.Work
        if action == .monitor {
            let identifier = identifier ?? spec.description
            var region = BeaconRegion(beaconIdentityConstraint: constraint, identifier: identifier)
            region.room = spec.room
            region.entryDelay = entryDelay
            region.exitDelay = exitDelay
            work = .monitor(region, identifier: identifier)
        } else {
            work = .range(constraint)
        }
        let session = SampleClientRun(bus: Self.busChoice(bus, parent: root.bus), app: app, json: output.json)
        let always = level.map { $0 == .always } ?? (action == .monitor)
        do {
            try await session.run(
                work, requestAlways: always, count: count, requestState: requestState, keepMonitoring: keepMonitoring)
        } catch {
            Reporting.printError(error.message)
            throw ExitCode(error.exitStatus)
        }
    }

    /// The client library's constraint for beaconctl's parse of the same text, of the same kind.
    static func libraryConstraint(
        _ parsed: BeaconKit.BeaconIdentityConstraint
    ) throws(BeaconLocationError) -> BeaconLocation.BeaconIdentityConstraint {
        switch parsed.kind {
        case .iBeacon:
            return switch (parsed.major, parsed.minor) {
            case (let major?, let minor?): .init(uuid: parsed.uuid, major: major, minor: minor)
            case (let major?, nil): .init(uuid: parsed.uuid, major: major)
            default: .init(uuid: parsed.uuid)
            }
        case .altBeacon:
            return switch (parsed.major, parsed.minor) {
            case (let id2?, let id3?): .altBeacon(id1: parsed.uuid, id2: id2, id3: id3)
            case (let id2?, nil): .altBeacon(id1: parsed.uuid, id2: id2)
            default: .altBeacon(id1: parsed.uuid)
            }
        case .eddystone:
            return try .eddystone(
                namespace: EddystoneNamespace(identityBytes: parsed.uuid).description,
                instance: parsed.eddystoneInstance?.description)
        case .privateDevice:
            return try .privateDevice(named: parsed.deviceName ?? "")
        }
    }
}
