import BeaconLocation
import BeaconctlKit
import BeacondAPI
import DBus

/// The sample client's life on the BeaconLocation library: register, authorize, start, print signals, clean up.
/// The library registers again when beacond restarts (the regions are the app's and stay; the ranging is started
/// again), so a restart is a note, not the end of the run.
final class SampleClientRun {
    enum Work {
        case monitor(BeaconRegion, identifier: String)
        case range(BeaconIdentityConstraint)
    }

    /// What the run waits on: the client's news, in the order it happened, or the user's SIGINT/SIGTERM.
    private enum Item {
        case news(ClientNews)
        case interrupted
    }

    let bus: BusChoice
    let app: String
    let json: Bool
    let offset: Int64
    private let items: AsyncStream<Item>
    private let inbox: AsyncStream<Item>.Continuation
    private var iterator: AsyncStream<Item>.Iterator
    private var client: BeaconClient?
    /// LocationManager1 signals taken from `items` so far (the library counts the same: `signalsBefore`).
    private var signalsRead = 0
    private var path = ""
    private var registrations = 0
    /// beacond's scanner was said to fail, and not yet to work again.
    private var toldCannotScan = false
    private var interrupted = false
    private var counted = 0
    private var count: Int?
    private var failure: BeaconctlError?

    init(bus: BusChoice, app: String, json: Bool) {
        self.bus = bus
        self.app = app
        self.json = json
        offset = TimeText.localOffset(at: TimeText.now())
        (items, inbox) = AsyncStream.makeStream(of: Item.self)
        iterator = items.makeAsyncIterator()
        let inbox = self.inbox
        Interruption.shared.whenInterrupted { inbox.yield(.interrupted) }
    }

    /// The region and ranging events `--count` counts.
    static let countedKinds: Set<String> = [
        BeacondMember.didEnterRegion, BeacondMember.didExitRegion, BeacondMember.didDetermineState,
        BeacondMember.didRangeBeacons,
    ]

    func run(
        _ work: Work, requestAlways: Bool, count: Int?, requestState: Bool, keepMonitoring: Bool
    ) async throws(BeaconctlError) {
        self.count = count
        // A SIGINT/SIGTERM that came while connecting or registering ends the run here, cleanly.
        if Interruption.shared.isInterrupted { return }
        let inbox = self.inbox
        do {
            client = try await BeaconClient.connect(appID: app, bus: bus.optionValue) { inbox.yield(.news($0)) }
        } catch {
            throw registrationError(error)
        }
        // The registration's news (ClientRegistered, the AuthorizationChanged behind it) is printed first.
        try await readUntil { run in run.registrations > 0 }
        var started = false
        do throws(BeaconctlError) {
            if interrupted { return await cleanUp(work, started: false, keep: false) }
            try await authorize(always: requestAlways)
            if interrupted { return await cleanUp(work, started: false, keep: false) }
            switch work {
            case .monitor(let region, let identifier):
                // A region of the app with this identifier, taken over at registration, is one we found, not one
                // we start: StartMonitoring of it (same or replaced) must not make us stop the app's region at exit.
                let found = try await monitoredIdentifiers().contains(identifier)
                try await call(BeacondMember.startMonitoring, [.vardict(region.dictionary)])
                started = !found
                if found {
                    say("the app already monitors '\(UntrustedText.escaped(identifier, quote: "'"))': it is left running at exit")
                }
                try failed()
                say("monitoring \(RegionText.region(region.dictionary)); Ctrl-C stops")
                if requestState {
                    try await call(BeacondMember.requestState, [.string(identifier)])
                    try failed()
                }
            case .range(let constraint):
                let before: Int
                let client = try connectedClient()
                do {
                    before = try await client.startRanging(constraint)
                } catch {
                    throw calling(BeacondMember.startRanging, error)
                }
                started = true
                try await readSignals(upTo: before)
                try failed()
                say("ranging \(RegionText.constraint(constraint.dictionary)); Ctrl-C stops")
            }
            if count.map({ counted < $0 }) ?? true {
                try await readUntil { run in run.failure != nil || run.count.map { run.counted >= $0 } ?? false }
            }
            // Ours is stopped after a failure too: MonitoringDidFail may be about another region of the app.
            await cleanUp(work, started: started, keep: keepMonitoring)
            try failed()
        } catch {
            await cleanUp(work, started: started, keep: keepMonitoring)
            throw error
        }
    }

    // MARK: Steps

    /// Requests authorization, and waits for an administrator while the answer is notDetermined.
    private func authorize(always: Bool) async throws(BeaconctlError) {
        let member = always ? BeacondMember.requestAlwaysAuthorization : BeacondMember.requestWhenInUseAuthorization
        let reply = try await call(member)
        try failed()
        guard case .string(let status)? = reply.first else { throw .unexpectedReply(member, reply) }
        print(
            kind: BeacondEventKind.authorizationRequested,
            data: [
                BeacondEventKey.request: .string(always ? BeacondRequestKind.always : BeacondRequestKind.whenInUse),
                BeacondEventKey.status: .string(status),
            ])
        guard status == BeacondStatus.notDetermined else { return }
        let level: AuthorizationLevel = always ? .always : .whenInUse
        say("waiting for an administrator: beaconctl auth grant \(app) \(level.rawValue)")
        var decided = false
        try await readUntil { _ in
            decided
        } onSignal: { kind, data in
            if kind == BeacondMember.authorizationChanged, data.string(BeacondEventKey.status) != BeacondStatus.notDetermined {
                decided = true
            }
        }
    }

    private func monitoredIdentifiers() async throws(BeaconctlError) -> [String] {
        let value: DBusValue
        let client = try connectedClient()
        do {
            value = try await client.clientProperty(BeacondMember.monitoredRegions)
        } catch {
            throw calling("Get", error)
        }
        return value.arrayElements.compactMap { $0.unwrapped.vardictEntries?.string(BeacondKey.identifier) }
    }

    /// A LocationManager1 method; what beacond sent before its reply is printed first.
    @discardableResult
    private func call(_ member: String, _ arguments: [DBusValue] = []) async throws(BeaconctlError) -> [DBusValue] {
        let reply: (values: [DBusValue], signalsBefore: Int)
        let client = try connectedClient()
        do {
            reply = try await client.call(member, arguments)
        } catch {
            throw calling(member, error)
        }
        try await readSignals(upTo: reply.signalsBefore)
        return reply.values
    }

    private func connectedClient() throws(BeaconctlError) -> BeaconClient {
        guard let client else { throw .busClosed(bus) }
        return client
    }

    /// Stops what we started, and only that: `started` is true only once StartMonitoring or StartRanging
    /// succeeded (a refusal, or StateNotSaved, is not undone by a stop that could remove what was there). Then
    /// Close(), which detaches the client (the app's other regions, those taken over at registration too, keep
    /// running); with `keep`, no Close: the connection's end detaches it the same way. Failures here change
    /// nothing for the user.
    private func cleanUp(_ work: Work, started: Bool, keep: Bool) async {
        guard let client else { return }
        if started {
            switch work {
            case .monitor(_, let identifier):
                if !keep { _ = try? await client.call(BeacondMember.stopMonitoring, [.string(identifier)], timeout: .seconds(2)) }
            case .range(let constraint):
                _ = try? await client.stopRanging(constraint, timeout: .seconds(2))
            }
        }
        if keep { await client.disconnect() } else { await client.close() }
    }

    // MARK: Reading the client's news

    /// Handles news until `done` holds (checked before each item); SIGINT/SIGTERM ends the wait early.
    private func readUntil(
        _ done: (SampleClientRun) -> Bool,
        onSignal: (String, VarDict) -> Void = { _, _ in }
    ) async throws(BeaconctlError) {
        while !done(self), !interrupted {
            guard let item = await iterator.next() else { return }
            try handle(item, onSignal: onSignal)
        }
    }

    /// Handles what beacond sent before a reply: `signals` LocationManager1 signals in all, already delivered.
    private func readSignals(upTo signals: Int) async throws(BeaconctlError) {
        try await readUntil { run in run.signalsRead >= signals || run.failure != nil }
    }

    private func handle(_ item: Item, onSignal: (String, VarDict) -> Void) throws(BeaconctlError) {
        switch item {
        case .interrupted:
            interrupted = true
        case .news(.registered(let path)):
            self.path = path
            registrations += 1
            if registrations > 1 { say("beacond is back: registered again as \(path)") }
            print(kind: BeacondEventKind.clientRegistered, data: [:])
        case .news(.daemonGone(let error)):
            // Not running, or there and not answering (hung: it owns its name): said as what it is, as status does.
            if registrations == 0 { throw registrationError(error) }
            say("\(error.message)")
        case .news(.registrationFailed(let error)):
            throw registrationError(error)
        case .news(.ended(let error)):
            if error != nil { throw .busClosed(bus) }
            interrupted = true
        case .news(.inUseChanged):
            break
        case .news(.managerChanged(let changed)):
            // beacond cannot scan (or can again): said, so an empty ranging is not taken for no beacon near.
            guard let scanner = changed[BeacondMember.scannerState]?.unwrapped.stringValue else { return }
            if scanner.hasPrefix(BeacondScannerState.failedPrefix) || scanner.hasPrefix(BeacondScannerState.waitingPrefix) {
                if !toldCannotScan { say("beacond cannot scan: \(scanner); it tries again by itself (`beaconctl status` says more)") }
                toldCannotScan = true
            } else if scanner == BeacondScannerState.scanning, toldCannotScan {
                toldCannotScan = false
                say("beacond scans again")
            }
        case .news(.signal(let member, let arguments)):
            signalsRead += 1
            guard let data = IncomingSignal.namedArguments(member: member, arguments) else { return }
            print(kind: member, data: data)
            onSignal(member, data)
            if member == BeacondMember.monitoringDidFail || member == BeacondMember.rangingDidFail {
                if failure == nil { failure = Self.failure(kind: member, data: data, bus: bus) }
            } else if Self.countedKinds.contains(member) {
                counted += 1
            }
        }
    }

    private func failed() throws(BeaconctlError) {
        if let failure { throw failure }
    }

    // MARK: Errors and output

    private func registrationError(_ error: BeaconLocationError) -> BeaconctlError {
        if error.name == BeaconLocationError.daemonUnavailableName, error.message.hasPrefix("cannot connect") {
            return .connecting(to: bus, DBusCallError(name: error.name, message: error.message))
        }
        return calling(BeacondMember.registerClient, error, interface: BeacondInterface.manager)
    }

    private func calling(
        _ member: String, _ error: BeaconLocationError, interface: String = BeacondInterface.locationManager
    ) -> BeaconctlError {
        if error.name == BeaconLocationError.daemonUnavailableName { return .daemonNotRunning(on: bus) }
        return .calling(interface, member, on: bus, DBusCallError(name: error.name, message: error.message))
    }

    /// MonitoringDidFail / RangingDidFail as the error the command exits with.
    static func failure(kind: String, data: VarDict, bus: BusChoice) -> BeaconctlError {
        let error = DBusCallError(
            name: data.string(BeacondEventKey.error) ?? "org.beacond.Error.Failed",
            message: data.string(BeacondEventKey.message) ?? "\(kind) without a message")
        return .calling(BeacondInterface.locationManager, kind, on: bus, error)
    }

    /// One signal (or one of our own steps), as an event line or a JSON object.
    func print(kind: String, data: VarDict) {
        var data = data
        data[BeacondEventKey.appID] = .string(app)
        data[BeacondEventKey.client] = .objectPath(path)
        let time = EventText.time(of: data, received: TimeText.now())
        if json {
            Reporting.printLine(EventText.json(kind: kind, data: data, time: time).text)
            return
        }
        Reporting.printLine(EventText.line(kind: kind, data: data, time: time, utcOffset: offset))
        if kind == BeacondMember.didRangeBeacons {
            for beacon in data.dictionaries(BeacondEventKey.beacons) {
                Reporting.printLine("    \(RegionText.beacon(beacon))  \(EventText.beaconSummary(beacon))")
            }
        }
    }

    /// A progress note: on stdout for people, on stderr in --json mode (stdout stays JSON).
    func say(_ text: String) {
        if json { Reporting.printError(text) } else { Reporting.printLine(text) }
    }
}
