package import BeaconKit
import BeacondAPI
package import Fleet
package import Logging

/// The daemon's decisions, with no I/O: the clients, the engine, the authorization book, scan control, background
/// delivery and the journal of what must be saved, owned by one value. Everything that happens to the daemon is an
/// input (`DaemonInput`) handed to `handle(_:at:)` with the time; what the daemon must do about it comes back as
/// effects (`DaemonEffect`) in the order they must be carried out, with the reply when the input was a call.
///
/// It routes: each input goes to the concern that owns what it changes, each a value with its own state and rules
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
    /// Manager1 `ScannerState`, what apps are told: the phase's text, except that a failed or waiting scanner
    /// being tried again stays failed until it scans (apps would otherwise hear "starting" and the failure again
    /// at every retry, and take the start for a recovery).
    var scannerStateShown = BeacondScannerState.idle
    /// What must reach the state database and has not yet, and the database (`StatePersistence`).
    var persistence: StatePersistence
    /// Background delivery's decisions: activation's rate limit, queue expiry, what a new client gets.
    var delivery = BackgroundDelivery()
    /// This node's room while an `[mqtt]` node runs, why none runs, and every receiver's room.
    var fleet = FleetRooms()
    /// What this receiver publishes while a node runs: its readings, and Home Assistant's entities and presence.
    var publishing = FleetPublishing()
    /// Why the files on disk were rejected at the last reload; nil once a reload succeeds.
    var rejectedConfiguration: String?

    let configDirectory: String
    /// When this daemon started (status says it).
    let startedAt: Timestamp
    /// The effects and timers of the input being handled, and its time.
    package internal(set) var outbox: CoreOutbox

    /// How long after a failed start the scanner is tried again (while someone still needs it).
    package static let scannerRetryInterval: Duration = .seconds(30)
    /// How often a seen region's last-seen time is saved while sightings arrive.
    package static let lastSeenSaveInterval: Duration = .seconds(10)

    package init(
        configuration: DaemonConfiguration, authorization: AuthorizationService, configDirectory: String,
        database: any StateDatabase, now: Timestamp
    ) {
        self.configuration = configuration
        self.authorization = authorization
        self.configDirectory = configDirectory
        persistence = StatePersistence(database: database)
        outbox = CoreOutbox(now: now)
        startedAt = now
        var engine = BeaconEngine(Self.monitoringConfiguration(configuration))
        engine.setPrivateDeviceKeys(Self.privateDeviceKeys(configuration))
        engine.setPrivateDeviceMeasuredPower(configuration.measuredPowerOverrides)
        clients = ClientService(engine: engine)
    }

    /// Every declared private device's key: the administrator's and every app's (an app sees only its own and the
    /// administrator's by name, but one resolver serves all).
    package static func privateDeviceKeys(_ configuration: DaemonConfiguration) -> [IdentityResolvingKey] {
        var keys = configuration.devices.sorted { $0.key < $1.key }.map(\.value)
        for appID in configuration.apps.keys.sorted() {
            keys += configuration.apps[appID]!.devices.sorted { $0.key < $1.key }.map(\.value)
        }
        return keys
    }

    package static func monitoringConfiguration(_ configuration: DaemonConfiguration) -> MonitoringConfiguration {
        // The loader already checked exit_timeout > 0; the fallback is only for a value that slipped through.
        (try? configuration.monitoringConfiguration()) ?? .default
    }

    /// The policy in force: beacond.toml's, with the administrator's services switch.
    package var policy: AuthorizationPolicy { authorization.policy(configured: configuration.policy) }

    package func record(_ appID: String) -> AuthorizationRecord { authorization.record(appID) }

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
                for case .observation(let observation) in events { observedLocally(observation) }
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
            fleetConnection(connected)
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
            markSeenRegionsChanged()
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
            try clients.startMonitoring(client: client, region, context, &outbox, &persistence, &delivery)
        case .stopMonitoring(let client, let identifier):
            try clients.stopMonitoring(client: client, identifier, context, &outbox, &persistence, &delivery)
        case .requestState(let client, let identifier):
            try clients.requestState(client: client, identifier, context, &outbox, &persistence, &delivery)
        case .startRanging(let client, let constraint):
            try clients.startRanging(client: client, constraint, context, &outbox, &persistence, &delivery)
        case .stopRanging(let client, let constraint):
            try clients.stopRanging(client: client, constraint, context, &outbox)
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
            return .configurationError(rejectedConfiguration ?? "")
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
            markSeenRegionsChanged()
            commitState()
        case .stateRetry:
            persistence.retryIsDue()
            commitState()
        case .queueExpiry:
            expireQueuedEvents()
        case .homeAssistant:
            updatePublishing { [now] publishing, placement in publishing.advance(to: now, placement: placement) }
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

    /// What the clients' side reads of the rest of the core, as it is now.
    package var clientContext: ClientService.Context {
        ClientService.Context(configuration: configuration, configDirectory: configDirectory, authorization: authorization, fleet: fleet)
    }
}

extension BeacondError {
    package var callError: CallError { .beacond(self) }
}

/// A client property by name; `clientPropertiesChanged` reads its value as it is now.
package enum ClientPropertyName {
    case authorizationStatus, inUse, monitoredRegions, rangedConstraints
}

/// Who a caller is, as the bus and the system say (resolved before the call reaches the core).
package struct Caller: Sendable {
    package var credentials: CallerCredentials
    package var processID: UInt32?

    package init(credentials: CallerCredentials, processID: UInt32?) {
        self.credentials = credentials
        self.processID = processID
    }
}

/// Everything that happens to the daemon.
package enum DaemonInput {
    /// A client's or administrator's method call; the step carries its reply.
    case call(DaemonCall)
    /// The bus is served: what the restore left to do (scanning, saving, expiring queued events).
    case started
    /// The scanner's input.
    case scanner(ScannerInput)
    case scannerStarted(label: String)
    case scannerFailedToStart(String)
    case scannerReported(ScannerStatus, label: String)
    /// Another receiver's reading or status, with the room the `[mqtt]` node knows the receiver by.
    case fleet(ReceiverDirectory.Input, room: String?)
    /// A node was made for `[mqtt]`, or none (`[mqtt]` is off, or a setting was refused).
    case fleetStarted(FleetStart)
    /// The node stopped; these are the receivers it knew.
    case fleetStopped(receivers: [ReceiverDirectory.Receiver])
    /// The node's connection to the broker was made (true) or lost (false).
    case fleetConnection(Bool)
    case timerFired(DaemonTimer)
    /// A connection left the bus.
    case connectionClosed(String)
    /// Signals are about to be sent, or a call that changes nothing was answered: what is pending is saved.
    case commit(StateDurability)
    /// The signals were sent: what sending them settles (queued events delivered) can be saved.
    case signalsSent
    /// Outside a commit (a watch event, GetStatus): recover or report a lost database now.
    case checkStateDatabase
    /// Stop scanning, cancel every timer and save everything, durably.
    case shuttingDown
}

/// A method call, its arguments decoded (a decoding error is part of the call: it is reported after the checks
/// that come before it).
package enum DaemonCall {
    case registerClient(appID: String, sender: String, caller: Caller)
    case requestAuthorization(AuthorizationRequest, client: Int)
    case startMonitoring(client: Int, Result<BeaconRegion, BeacondError>)
    case stopMonitoring(client: Int, identifier: String)
    case requestState(client: Int, identifier: String)
    case startRanging(client: Int, Result<BeaconIdentityConstraint, BeacondError>)
    case stopRanging(client: Int, Result<BeaconIdentityConstraint, BeacondError>)
    case setInUse(client: Int, Bool)
    case close(client: Int)
    case setAuthorization(appID: String, status: String, sender: String)
    case resetAuthorization(appID: String)
    case setLocationServicesEnabled(Bool)
    /// The configuration read again from disk, or why it was rejected.
    case reload(Result<DaemonConfiguration, ConfigurationRejection>)
}

/// Why the configuration files were rejected (file, line, what is wrong).
package struct ConfigurationRejection: Error {
    package var message: String

    package init(message: String) {
        self.message = message
    }
}

package enum CallReply: Equatable {
    case none
    case clientPath(String)
    case status(AuthorizationStatus)
    /// Reload's answer: "" when the new configuration is in force.
    case configurationError(String)
}

/// A refused call.
package enum CallError: Error, Equatable {
    case beacond(BeacondError)
    /// The client's object is gone.
    case clientClosed(Int)
}

/// What one input led to.
package struct DaemonStep {
    package var reply: Result<CallReply, CallError>?
    package var effects: [DaemonEffect]
}

/// What the daemon must do, in this order.
package enum DaemonEffect {
    case notify(ClientAddress, ClientEvent, Audience)
    case adminEvent(AdminEvent)
    case clientPropertiesChanged(ClientAddress, [ClientProperty])
    case managerPropertyChanged(ManagerProperty)
    /// A ranging result for the client (and administrators watching), if they are reading.
    case range(ClientAddress, BeaconIdentityConstraint, [RangedBeaconReport])
    /// Export a new client's object.
    case exportClient(Int)
    /// Its object goes (the client closed or detached).
    case unexportClient(path: String)
    /// Ask the bus to start an app's `dbus_name` to deliver its queued events.
    case activate(dbusName: String, appID: String)
    case arm(DaemonTimer, at: Timestamp)
    case cancel(DaemonTimer)
    case startScanner
    case stopScanner
    /// This receiver's reading for the broker, then the Home Assistant distance sensor's state if any.
    case publishReading(ESPresenseReading, distance: HomeAssistantPresence.Publication?)
    /// Home Assistant's entities and states (retained).
    case publishRetained([HomeAssistantPresence.Publication])
    /// `[mqtt]` changed on reload: the node is replaced.
    case mqttSettingsChanged(from: MQTTSettings)
    /// Something must be saved and signals are waiting: a flush is due.
    case scheduleFlush
    case log(Logger.Level, String, Logger.Metadata)
}

/// The state database as the core needs it, synchronously (`StateDatabaseFile` in the daemon, a dictionary in tests).
package protocol StateDatabase: AnyObject {
    var file: String { get }
    /// Whether the open database is no longer the file on disk.
    var isLost: Bool { get }
    /// Checks that the open database is still the file on disk (writing it anew if it was deleted).
    func ensure() throws(StateDatabaseError)
    func save(_ record: AuthorizationRecord, for appID: String) throws(StateDatabaseError)
    func saveLocationServicesSwitch(_ enabled: Bool) throws(StateDatabaseError)
    func apply(_ batch: [StateChange], durability: StateDurability) throws(StateDatabaseError)
    func queuedEvents(of appID: String, expiredBefore: Timestamp) throws(StateDatabaseError) -> QueuedEvents
    func dropExpiredQueuedEvents(before: Timestamp) throws(StateDatabaseError) -> [String: Int]
    func oldestQueuedEventTime() throws(StateDatabaseError) -> Timestamp?
    func queuedEventCounts() throws(StateDatabaseError) -> [String: Int]
    func trimRegions(perApp: Int) throws(StateDatabaseError) -> [String: Int]
    func loadRegions(perApp: Int) throws(StateDatabaseError) -> (regions: [StoredRegion], problems: [String])
    func highestStoredClient() throws(StateDatabaseError) -> Int
}
