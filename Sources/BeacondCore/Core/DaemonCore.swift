package import BeaconKit
import BeacondAPI

/// The daemon's decisions, with no I/O. Everything that happens to the daemon is an input (`DaemonInput`) handed to
/// `handle(_:at:)` with the time; what the daemon must do about it comes back as effects (`DaemonEffect`) in the
/// order they must be carried out, with the reply when the input was a call.
///
/// It routes, and keeps what only the whole can: what a reload changed, when the engine is settled (its timer
/// re-armed, scanning started or stopped), detection resumed and suspended. Each input goes to the concern that owns
/// what it changes, each a value with its own state and rules
/// and its own tests: the clients and their regions (`ClientService`), authorization (`AuthorizationService`),
/// background delivery (`BackgroundDelivery`), state persistence (`StatePersistence`), the fleet's rooms and what
/// this receiver publishes (`FleetRooms`, `FleetPublishing`) and scan control (`ScanControl`). All of them write what
/// they ask of the daemon to one outbox (`CoreOutbox`).
///
/// The state database is reached through `StateDatabase`, synchronously: a decision is applied only once it is saved
/// (a refused save must refuse the call), and a call's changes are on disk before its reply, so these writes cannot
/// be effects carried out later. Everything else the core asks for is an effect.
package struct DaemonCore {
    var configuration: DaemonConfiguration
    /// Every app's authorization and the services switch, changed only once saved.
    var authorization: AuthorizationService
    /// The clients, their regions and ranging, and the engine they run in (`ClientService`).
    var clients: ClientService
    /// When the scanner runs (`ScanControl`).
    var scanControl = ScanControl()
    /// What must reach the state database and has not yet, and the database (`StatePersistence`).
    var persistence: StatePersistence
    /// Background delivery's decisions: activation's rate limit, queue expiry, what a new client gets.
    var delivery = BackgroundDelivery()
    /// This node's room while an `[mqtt]` node runs, why none runs, and every receiver's room.
    var fleet = FleetRooms()
    /// What this receiver publishes while a node runs: its readings, and Home Assistant's entities and presence.
    var publishing = FleetPublishing()
    /// The configuration directory, and why its files were rejected at the last reload.
    var source: ConfigurationSource
    /// The effects and timers of the input being handled, and its time.
    package internal(set) var outbox: CoreOutbox

    /// How often a seen region's last-seen time is saved while sightings arrive.
    package static let lastSeenSaveInterval: Duration = .seconds(10)

    package init(
        configuration: DaemonConfiguration, authorization: AuthorizationService, configDirectory: String,
        database: any StateDatabase, now: Timestamp
    ) {
        self.configuration = configuration
        self.authorization = authorization
        source = ConfigurationSource(directory: configDirectory)
        persistence = StatePersistence(database: database)
        outbox = CoreOutbox(now: now)
        var engine = BeaconEngine(configuration.monitoring)
        engine.setPrivateDeviceKeys(configuration.privateDeviceKeys)
        engine.setPrivateDeviceMeasuredPower(configuration.measuredPowerOverrides)
        clients = ClientService(engine: engine)
    }

    /// The policy in force: beacond.toml's, with the administrator's services switch.
    package var policy: AuthorizationPolicy { authorization.policy(configured: configuration.policy) }

    package func effectiveStatus(_ appID: String) -> AuthorizationStatus { authorization.effectiveStatus(appID, policy) }

    // MARK: The entry point

    /// Handles one input at `now`: the effects to carry out, in order, and the reply when it was a call.
    package mutating func handle(_ input: DaemonInput, at now: Timestamp) -> DaemonStep {
        outbox.now = now
        var reply: Result<CallReply, CallError>?
        switch input {
        case .call(let call):
            reply = answer(call)
        case .started:
            engineChanged([])
            commitState()
            expireQueuedEvents()
        case .scanner(let scannerInput):
            let events = clients.engine.ingest(scannerInput, at: now)
            engineChanged(events)
            if publishing.isPublishing {
                for case .observation(let observation) in events { publishing.observed(observation, presence: clients.engine.presence, &outbox) }
            }
            scheduleLastSeenSave()
        case .scannerStarted(let label):
            perform(scanControl.started(label: label))
        case .scannerFailedToStart(let reason):
            perform(scanControl.startFailed(reason))
        case .scannerReported(let status, let label):
            perform(scanControl.reported(status, label: label, needsScanning: needsScanning))
        case .fleet(let fleetInput, let room):
            fleet(fleetInput, room: room)
        case .fleetStarted(let start):
            fleetStarted(start)
        case .fleetStopped(let receivers):
            fleetStopped(receivers: receivers)
        case .fleetConnection(let connected):
            publishing.connectionChanged(connected, presence: clients.engine.presence, &outbox)
        case .timerFired(let timer):
            outbox.fired(timer)
            timerFired(timer)
        case .connectionClosed(let name):
            let context = clientContext
            clients.connectionClosed(name, context, &outbox, &persistence, &delivery)
            engineSettled()
        case .commit(let durability):
            commitState(durability)
        case .signalsSent:
            if persistence.signalsSent() { commitState() }
        case .checkStateDatabase:
            checkStateDatabase()
        case .shuttingDown:
            perform(scanControl.shutdown())
            for timer in Array(outbox.armedTimers.keys) { outbox.cancel(timer) }
            persistence.markRegionsChanged(clients.seenRegions)
            commitState(.powerLoss, force: true)
        }
        return DaemonStep(reply: reply, effects: outbox.take())
    }

    /// A call's reply, once what it changed is saved: a change the reply acknowledges must survive a restart.
    private mutating func answer(_ call: DaemonCall) -> Result<CallReply, CallError> {
        let changesBefore = persistence.journal.changeCount
        let reply: CallReply
        do throws(CallError) {
            reply = try perform(call)
            engineSettled()
        } catch {
            engineSettled()
            commitState()
            return .failure(error)
        }
        // RegisterClient's saved changes are side effects (a takeover of detached regions): failing it would leave a
        // client the caller never heard of; the failure is logged and shown in status instead.
        let reportsStateNotSaved = if case .registerClient = call { false } else { true }
        let error = commitState(.powerLoss)
        if let error, reportsStateNotSaved, persistence.journal.changeCount != changesBefore {
            return .failure(
                .beacond(
                    BeacondError(
                        .stateNotSaved,
                        "the change is in effect now but could not be saved (\(error.message)), so a "
                            + "restart of beacond would lose it; beacond keeps retrying, at most \(StateJournal.maximumRetryDelay) apart. "
                            + "Fix: \(error.fix)")))
        }
        return .success(reply)
    }

    /// Routes a call to the concern it is for. Clients' calls read the rest of the core through one context, made
    /// before the call (none of them changes what it reads).
    private mutating func perform(_ call: DaemonCall) throws(CallError) -> CallReply {
        let context = clientContext
        switch call {
        case .registerClient(let appID, let sender, let caller):
            let session = try clients.register(appID, sender: sender, caller: caller, context, &outbox, &persistence, &delivery)
            // The app's queue goes to its new client after the reply, once everything before it is saved.
            commitState()
            BackgroundDelivery.deliverQueue(
                to: session, status: effectiveStatus(session.appID), configuration: configuration, &persistence, &outbox)
            return .clientPath(session.path)
        case .requestAuthorization(let request, let client):
            return .status(try requestAuthorization(request, client: client))
        case .startMonitoring(let client, let region):
            try LocationManagerCalls.startMonitoring(&clients, client: client, region, context, &outbox, &persistence, &delivery)
        case .stopMonitoring(let client, let identifier):
            try LocationManagerCalls.stopMonitoring(&clients, client: client, identifier, context, &outbox, &persistence, &delivery)
        case .requestState(let client, let identifier):
            try LocationManagerCalls.requestState(&clients, client: client, identifier, context, &outbox, &persistence, &delivery)
        case .startRanging(let client, let constraint):
            try LocationManagerCalls.startRanging(&clients, client: client, constraint, context, &outbox, &persistence, &delivery)
        case .stopRanging(let client, let constraint):
            try LocationManagerCalls.stopRanging(&clients, client: client, constraint, context, &outbox)
        case .setInUse(let client, let inUse):
            clients.setInUse(client: client, inUse, context, &outbox, &persistence, &delivery)
        case .close(let client):
            clients.close(client, context, &outbox, &persistence, &delivery)
        case .setAuthorization(let appID, let status, let sender):
            try setAuthorization(appID, status, sender: sender)
        case .resetAuthorization(let appID):
            try resetAuthorization(appID)
        case .setLocationServicesEnabled(let enabled):
            try setLocationServicesEnabled(enabled)
        case .reload(let loaded):
            reload(loaded)
            return .configurationError(source.rejection ?? "")
        }
        return .none
    }

    private mutating func timerFired(_ timer: DaemonTimer) {
        switch timer {
        case .engine:
            engineChanged(clients.engine.advance(to: now))
        case .scannerRetry:
            perform(scanControl.retryDue(needsScanning: needsScanning))
        case .lastSeenSave:
            persistence.markRegionsChanged(clients.seenRegions)
            commitState()
        case .stateRetry:
            persistence.retryIsDue()
            commitState()
        case .queueExpiry:
            expireQueuedEvents()
        case .homeAssistant:
            publishing.update(presence: clients.engine.presence, &outbox) { [now] in $0.advance(to: now, placement: $1) }
        }
    }

    /// Drops the queued events older than `queue_ttl` (once what is pending is written) and arms the timer for
    /// the next oldest.
    private mutating func expireQueuedEvents() {
        commitState()
        BackgroundDelivery.dropExpired(configuration: configuration, persistence, &outbox)
        BackgroundDelivery.scheduleExpiry(configuration: configuration, persistence, &outbox)
    }

    // MARK: Effects

    /// The time of the input being handled.
    package var now: Timestamp { outbox.now }

    /// What an operation that failed half-way left to do (a restore that could not finish logs what it found).
    package mutating func takeEffects() -> [DaemonEffect] { outbox.take() }

    /// Where the configuration is read from (`/etc/beacond`).
    package var configDirectory: String { source.directory }

    /// What the clients' side reads of the rest of the core, as it is now.
    package var clientContext: ClientService.Context {
        ClientService.Context(configuration: configuration, configDirectory: configDirectory, authorization: authorization, fleet: fleet)
    }
}
