public import BeaconKit
import BeacondAPI
import Fleet
public import DBus
public import MainLoopKit
public import Logging
import Foundation

/// Where and how the daemon runs (from `beacond`'s options).
public struct DaemonOptions: Sendable {
    public var bus: DBusBusAddress
    public var configDirectory: String
    public var stateDirectory: String
    /// `--scanner`: overrides `[scanner] source` from beacond.toml.
    public var scanner: ScannerSpec?

    public init(bus: DBusBusAddress, configDirectory: String, stateDirectory: String, scanner: ScannerSpec?) {
        self.bus = bus
        self.configDirectory = configDirectory
        self.stateDirectory = stateDirectory
        self.scanner = scanner
    }
}

/// Why the daemon could not start. `isConfigurationError` selects exit status 78 (EX_CONFIG).
public struct DaemonStartError: Error, CustomStringConvertible {
    public var message: String
    public var isConfigurationError: Bool
    public var description: String { message }
}

/// The daemon's behaviour: client sessions, the authorization flow, the engine, scan control and the admin
/// API, served on D-Bus. It is an actor running on the `MainLoop`'s thread, so D-Bus callbacks, scanner input
/// and timers (all on that thread) enter it synchronously, and everything it owns is touched by one thread.
public actor BeaconDaemon {
    nonisolated let loop: MainLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    let options: DaemonOptions
    var logger: Logger
    let clock: @Sendable () -> Timestamp
    let startedAt: Timestamp

    var configuration: DaemonConfiguration
    /// Replaced only when the database file was deleted under the daemon (`ensureStateFile`).
    var store: StateStore
    /// One daemon per state directory, held for the daemon's life.
    var stateLock: StateDirectoryLock
    var stateWatch: StateDirectoryWatch?
    /// Set while the database file is gone or replaced and could not be written anew.
    var stateFileLost = false
    /// Every app's authorization and the services switch (`AuthorizationService`), changed only once saved.
    var authorization: AuthorizationService
    /// Why the files on disk were rejected at the last reload (the previous configuration stays in force); nil
    /// once a reload succeeds.
    var rejectedConfiguration: String?

    var connection: DBusConnection?
    var server: DBusObjectServer?
    /// The registered clients and the connections watching `Admin1.Event` (`ClientRegistry`): they change only
    /// through it.
    var clients = ClientRegistry()
    /// The pipeline every client's regions and ranging run in; changed only through its methods.
    var engine: BeaconEngine
    var engineTimer: MainLoop.SourceID?
    /// When `engineTimer` fires.
    var engineTimerFires: ContinuousClock.Instant?
    /// When the scanner runs and what it is doing (`ScanControl`); the two below change only as it says.
    var scanControl = ScanControl()
    var scanner: (any BeaconScanner)?
    /// While scanning is needed but the scanner could not start: the next attempt.
    var scannerRetry: MainLoop.SourceID?

    /// The signals waiting to go out and the flow control towards each peer (`SignalOutbox`).
    var outbox = SignalOutbox()

    /// What must reach the state database and has not yet (`StateJournal`; committed by `BeaconDaemon+State`).
    var journal = StateJournal()
    /// The timer that saves last-seen times while sightings arrive.
    var lastSeenSave: MainLoop.SourceID?
    /// While the database cannot be written: the next try (`StateJournal`'s backoff).
    var stateRetry: MainLoop.SourceID?
    /// Fires when the oldest queued event is older than `queue_ttl` (`scheduleQueueExpiry`).
    var queueExpiry: MainLoop.SourceID?
    /// Background delivery's decisions: activation's rate limit, queue expiry, what a new client gets.
    var delivery = BackgroundDelivery()

    /// This daemon as a receiver on the MQTT broker of `[mqtt]` (nil while it is off); `BeaconDaemon+MQTT` only.
    var mqttNode: MQTTNode?
    /// Every room numbered in this process (at restore, and by each `[mqtt]` node's directory): a number the engine
    /// may still hold is never given to another room, and hearings are saved by room while no node runs.
    var numberedRooms: [ReceiverID: String] = [:]
    /// Why `[mqtt]` is set but no node runs (libmosquitto refused a setting), for status.
    var mqttProblem: String?

    /// Fatal conditions after start (the bus went away): `beacond` exits non-zero so systemd restarts it.
    public nonisolated let failures: AsyncStream<String>
    let failureContinuation: AsyncStream<String>.Continuation

    static let maximumClientsPerConnection = 32

    /// Loads configuration and state; throws a configuration error (exit 78) or a state error.
    public init(options: DaemonOptions, loop: MainLoop, logger: Logger,
                clock: @escaping @Sendable () -> Timestamp = BeaconDaemon.wallClock) throws(DaemonStartError) {
        self.options = options
        self.loop = loop
        self.logger = logger
        self.clock = clock
        startedAt = clock()
        do {
            configuration = try ConfigurationLoader.load(directory: options.configDirectory, scanner: options.scanner)
        } catch {
            throw DaemonStartError(message: "\(error)", isConfigurationError: true)
        }
        do {
            stateLock = try StateDirectoryLock(directory: options.stateDirectory)
            store = try StateStore(directory: options.stateDirectory)
            authorization = AuthorizationService(records: try store.loadAll(), servicesSwitch: try store.locationServicesSwitch())
        } catch {
            throw DaemonStartError(message: "\(error)", isConfigurationError: false)
        }
        engine = BeaconEngine(Self.monitoringConfiguration(configuration))
        (failures, failureContinuation) = AsyncStream.makeStream()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        if let note = store.recoveryNote { logger.error("\(note)") }
    }

    /// The engine's clock: wall time read once at start, advanced by CLOCK_BOOTTIME. Exit timeouts and ranging
    /// cycles must not jump when the wall clock is stepped (NTP at boot on a board without an RTC would otherwise
    /// exit every region at once, or freeze them for as long as the step back); timestamps sent to clients stay
    /// close to wall time, and still count while the machine sleeps.
    public static let wallClock: @Sendable () -> Timestamp = {
        let elapsed = microseconds(CLOCK_BOOTTIME) - startBoot
        return Timestamp(microsecondsSinceEpoch: startWall &+ elapsed)
    }

    static func microseconds(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    static let startWall = microseconds(CLOCK_REALTIME)
    static let startBoot = microseconds(CLOCK_BOOTTIME)

    static func monitoringConfiguration(_ configuration: DaemonConfiguration) -> MonitoringConfiguration {
        // The loader already checked exit_timeout > 0; the fallback is only for a value that slipped through.
        (try? configuration.monitoringConfiguration()) ?? .default
    }

    /// The policy in force: beacond.toml's, with the administrator's services switch.
    var policy: AuthorizationPolicy { authorization.policy(configured: configuration.policy) }

    func record(_ appID: String) -> AuthorizationRecord { authorization.record(appID) }

    func effectiveStatus(_ appID: String) -> AuthorizationStatus { authorization.effectiveStatus(appID, policy) }

    // MARK: Start and stop

    /// Connects to the bus, exports the objects, then takes the name (so the first call can be answered).
    public func start() throws(DaemonStartError) {
        do {
            try restoreRegions()
        } catch {
            throw DaemonStartError(message: "\(error)", isConfigurationError: false)
        }
        let connection: DBusConnection
        do {
            connection = try DBusConnection(options.bus)
        } catch {
            throw DaemonStartError(message: "cannot connect to the \(Self.describe(options.bus)): \(error.message)",
                                   isConfigurationError: false)
        }
        let server: DBusObjectServer
        do {
            server = try DBusObjectServer(connection: connection, loop: loop)
        } catch {
            throw DaemonStartError(message: "cannot serve on the bus: \(error)", isConfigurationError: false)
        }
        self.connection = connection
        self.server = server
        server.connectionClosed = { name in
            self.assumeIsolated { $0.connectionClosed(name) }
        }
        server.disconnected = {
            self.assumeIsolated { $0.busDisconnected() }
        }
        server.export(managerObject())
        let ownership: DBusConnection.NameOwnership
        do {
            ownership = try connection.requestName(BeacondBus.name)
        } catch {
            throw DaemonStartError(message: "cannot own \(BeacondBus.name): \(error.message). On the system bus the D-Bus "
                + "policy /usr/share/dbus-1/system.d/org.beacond.conf must let this user own it (make install puts it there)",
                                   isConfigurationError: false)
        }
        guard ownership == .primaryOwner || ownership == .alreadyOwner else {
            throw DaemonStartError(message: "another beacond already owns \(BeacondBus.name) on the \(Self.describe(options.bus)); "
                + "stop it first (systemctl stop beacond)", isConfigurationError: false)
        }
        // Resumed regions need the scanner; anything their restore left to save is saved now.
        watchStateDirectory()
        startMQTT()
        engineChanged([])
        commitState()
        dropExpiredQueuedEvents()
        scheduleQueueExpiry()
        logger.info("beacond \(BeacondVersion.current) serving \(BeacondBus.name) on the \(Self.describe(options.bus))",
                    metadata: ["bus.unique_name": "\(connection.uniqueName)", "scanner": "\(configuration.scanner)",
                               "config.directory": "\(options.configDirectory)", "state.directory": "\(options.stateDirectory)"])
    }

    /// Stops scanning and leaves the bus.
    public func shutdown() {
        stopMQTT()
        perform(scanControl.shutdown())
        stopEngineTimer()
        stopLastSeenSave()
        stopQueueExpiry()
        stopWatchingStateDirectory()
        stopStateRetry()
        markSeenRegionsChanged()
        commitState(.powerLoss, force: true)
        flushOutbox()
        connection?.flush()
        // The last write is done: the state directory is free for the next beacond.
        stateLock.release()
        if let server { for path in server.exportedPaths { server.unexport(path: path) } }
        server = nil
        connection = nil
        failureContinuation.finish()
        logger.info("beacond stopped")
    }

    func busDisconnected() {
        logger.critical("the D-Bus connection was closed; exiting so the service manager restarts beacond")
        failureContinuation.yield("the bus connection was closed")
    }

    static func describe(_ bus: DBusBusAddress) -> String {
        switch bus {
        case .system: return "system bus"
        case .session: return "session bus"
        case .address(let address): return "bus at \(address)"
        }
    }

    // MARK: Signals out

    /// Queues a signal (`SignalOutbox`: after the current method's reply, in order). `counted`: admitted as
    /// droppable, already counted.
    func queueSignal(path: String, interface: String, member: String, _ arguments: [DBusValue], to destination: String?,
                     counted: Bool = false) {
        let signal = SignalOutbox.Signal(path: path, interface: interface, member: member, arguments: arguments,
                                         destination: destination)
        if outbox.queue(signal, counted: counted) { flushSoon() }
    }

    func scheduleFlush() {
        if outbox.flushNeeded() { flushSoon() }
    }

    func flushSoon() {
        loop.execute { self.assumeIsolated { $0.flushOutbox() } }
    }

    /// Commits the state the signals report, then sends them, then commits what sending them settles.
    func flushOutbox() {
        commitState()
        let signals = outbox.takeForSending()
        defer {
            if journal.signalsSent() { commitState() }
        }
        guard let server else { return }
        for signal in signals {
            do {
                try server.emit(path: signal.path, interface: signal.interface, member: signal.member,
                                arguments: signal.arguments, destination: signal.destination)
            } catch {
                logger.error("could not send \(signal.interface).\(signal.member): \(error)")
            }
        }
        pingPeers()
    }

    static let smallSignalBytes = SignalOutbox.smallSignalBytes

    /// A signal on a client's object, to that client's connection only (location is private).
    func signalClient(_ session: ClientSession, _ member: String, _ arguments: [DBusValue]) {
        guard let sender = session.sender else { return }
        queueSignal(path: session.path, interface: BeacondInterface.locationManager, member: member, arguments,
                    to: sender)
    }

    /// The client's properties as they are now (read from the registry, not from a caller's copy).
    func clientPropertiesChanged(_ number: Int, _ names: [String]) {
        guard let session = clients[number], let sender = session.sender else { return }
        var changed: [String: DBusValue] = [:]
        var invalidated: [DBusValue] = []
        for name in names {
            switch Self.clientPropertyChangeSignal(name) {
            case .value: changed[name] = clientProperty(name, session)
            case .invalidates: invalidated.append(.string(name))
            }
        }
        queueSignal(path: session.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    [.string(BeacondInterface.locationManager), .vardict(changed), .array(elementSignature: "s", invalidated)],
                    to: sender)
    }

    func managerPropertiesChanged(_ changed: [String: DBusValue]) {
        queueSignal(path: BeacondBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    [.string(BeacondInterface.manager), .vardict(changed), .array(elementSignature: "s", [])], to: nil)
    }

    /// `Admin1.Event` to every watcher that reads (flow control: events are for watching, and a stopped
    /// `beaconctl events` must not stall the daemon), or to the watchers `admitted` for a ranging event.
    func adminEvent(_ kind: String, _ data: [String: DBusValue], admitted: [String]? = nil) {
        guard clients.hasEventWatchers else { return }
        let recipients = admitted ?? clients.eventWatchers.filter {
            admitDroppable(to: $0, bytes: Self.smallSignalBytes, what: "Admin1.Event(\(kind))")
        }
        guard !recipients.isEmpty else { return }
        var data = data
        data[BeacondEventKey.timestamp] = .uint64(UInt64(clamping: clock().microsecondsSinceEpoch))
        for watcher in recipients {
            queueSignal(path: BeacondBus.managerPath, interface: BeacondInterface.admin, member: BeacondMember.event,
                        [.string(kind), .vardict(data)], to: watcher, counted: true)
        }
    }

    func clientEventData(_ session: ClientSession) -> [String: DBusValue] {
        [BeacondEventKey.appID: .string(session.appID), BeacondEventKey.client: .objectPath(session.path)]
    }
}

extension BeaconDaemon {
    /// A round trip through the loop (the watchdog pings systemd only when this returns).
    public func ping() {}
}
