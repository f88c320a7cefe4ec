import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus

/// The sample client's life: register, authorize, start, print signals, clean up.
struct SampleClientRun {
    enum Work {
        case monitor(VarDict)
        case range(VarDict)
    }

    let client: DaemonClient
    let app: String
    let json: Bool
    let loop: SignalLoop
    let offset: Int64
    private(set) var path = ""

    init(client: DaemonClient, app: String, json: Bool) throws(BeaconctlError) {
        self.client = client
        self.app = app
        self.json = json
        loop = try SignalLoop(client: client)
        offset = TimeText.localOffset(at: TimeText.now())
    }

    /// The region and ranging events `--count` counts.
    static let countedKinds: Set<String> = [
        BeacondMember.didEnterRegion, BeacondMember.didExitRegion, BeacondMember.didDetermineState,
        BeacondMember.didRangeBeacons,
    ]

    mutating func run(
        _ work: Work, requestAlways: Bool, count: Int?, requestState: Bool,
        keepMonitoring: Bool
    ) throws(BeaconctlError) {
        // A SIGINT/SIGTERM that came while connecting or registering ends the run here, cleanly.
        if loop.interruption.isInterrupted { return }
        path = try client.registerClient(app: app)
        let session = self
        var counted = 0
        var failure: BeaconctlError?
        // Every signal of our client, whenever it is read: printed, counted for --count; a failure ends the run.
        func handle(_ signal: IncomingSignal) -> Bool {
            guard case .client(let from, let kind, let data) = signal, from == session.path else { return true }
            session.print(kind: kind, data: data)
            if kind == BeacondMember.monitoringDidFail || kind == BeacondMember.rangingDidFail {
                failure = Self.failure(kind: kind, data: data, bus: session.client.bus)
                return false
            }
            if Self.countedKinds.contains(kind) { counted += 1 }
            return count.map { counted < $0 } ?? true
        }
        // What beacond sent before the reply to the last call, printed before what we print about that call. A
        // failure among it ends the run there (nothing more is started); what it counts only decides whether the
        // receive loop runs. ClientRegistered stays the first line: nothing of a client can come before the client.
        func handleEarlier() throws(BeaconctlError) {
            _ = try loop.handleEarlier(handle)
            if let failure { throw failure }
        }
        print(kind: BeacondEventKind.clientRegistered, data: [:])
        var started = false
        do throws(BeaconctlError) {
            if loop.interruption.isInterrupted { return session.cleanUp(work, started: false, keep: false) }
            try authorize(always: requestAlways, handleEarlier: handleEarlier)
            if loop.interruption.isInterrupted { return session.cleanUp(work, started: false, keep: false) }
            switch work {
            case .monitor(let region):
                // A region of the app with this identifier, taken over at registration, is one we found, not one
                // we start: StartMonitoring of it (same or replaced) must not make us stop the app's region at exit.
                let identifier = region.string(BeacondKey.identifier) ?? ""
                let found = try client.monitoredIdentifiers(client: path).contains(identifier)
                try client.startMonitoring(client: path, region: region)
                started = !found
                if found { say("the app already monitors '\(UntrustedText.escaped(identifier, quote: "'"))': it is left running at exit") }
                try handleEarlier()
                say("monitoring \(RegionText.region(region)); Ctrl-C stops")
                if requestState, let identifier = region.string(BeacondKey.identifier) {
                    try client.requestState(client: path, identifier: identifier)
                    try handleEarlier()
                }
            case .range(let constraint):
                try client.startRanging(client: path, constraint: constraint)
                started = true
                try handleEarlier()
                say("ranging \(RegionText.constraint(constraint)); Ctrl-C stops")
            }
            if count.map({ counted < $0 }) ?? true {
                _ = try loop.run(handle)
            }
            // Ours is stopped after a failure too: MonitoringDidFail may be about another region of the app.
            cleanUp(work, started: started, keep: keepMonitoring)
            if let failure { throw failure }
        } catch {
            cleanUp(work, started: started, keep: keepMonitoring)
            throw error
        }
    }

    /// Requests authorization, and waits for an administrator while the answer is notDetermined.
    private func authorize(always: Bool, handleEarlier: () throws(BeaconctlError) -> Void) throws(BeaconctlError) {
        let status = try client.requestAuthorization(client: path, always: always)
        try handleEarlier()
        let level: AuthorizationLevel = always ? .always : .whenInUse
        print(
            kind: BeacondEventKind.authorizationRequested,
            data: [
                BeacondEventKey.request: .string(always ? BeacondRequestKind.always : BeacondRequestKind.whenInUse),
                BeacondEventKey.status: .string(status),
            ])
        guard status == BeacondStatus.notDetermined else { return }
        say("waiting for an administrator: beaconctl auth grant \(app) \(level.rawValue)")
        let session = self
        _ = try loop.run { signal throws(BeaconctlError) in
            guard case .client(let from, let kind, let data) = signal, from == session.path else { return true }
            session.print(kind: kind, data: data)
            return
                !(kind == BeacondMember.authorizationChanged
                && data.string(BeacondEventKey.status) != BeacondStatus.notDetermined)
        }
    }

    /// Stops what we started, and only that: `started` is true only once StartMonitoring or StartRanging
    /// succeeded (a refusal, or StateNotSaved, is not undone by a stop that could remove what was there). Then
    /// Close(), which detaches the client (the app's other regions, those taken over at registration too, keep
    /// running); with `keep`, no Close: the connection's end detaches it the same way. Failures here change
    /// nothing for the user.
    private func cleanUp(_ work: Work, started: Bool, keep: Bool) {
        client.timeout = .seconds(2)
        if started {
            switch work {
            case .monitor(let region):
                if !keep, let identifier = region.string(BeacondKey.identifier) {
                    try? client.stopMonitoring(client: path, identifier: identifier)
                }
            case .range(let constraint):
                try? client.stopRanging(client: path, constraint: constraint)
            }
        }
        if !keep { try? client.close(client: path) }
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
                Reporting.printLine("    \(beacon.string(BeacondKey.uuid) ?? "?")  \(EventText.beaconSummary(beacon))")
            }
        }
    }

    /// A progress note: on stdout for people, on stderr in --json mode (stdout stays JSON).
    func say(_ text: String) {
        if json { Reporting.printError(text) } else { Reporting.printLine(text) }
    }
}
