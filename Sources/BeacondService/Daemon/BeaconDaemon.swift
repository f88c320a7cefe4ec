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

/// Why the daemon could not start, and the exit status that tells systemd which kind of failure it was.
public enum DaemonStartError: Error, CustomStringConvertible {
    /// beacond.toml or apps.d is wrong: EX_CONFIG (78), which `RestartPreventExitStatus=` can keep from looping.
    case configuration(String)
    /// The state directory or database cannot be used.
    case state(String)
    /// The bus cannot be reached, or its name cannot be owned.
    case bus(String)

    public var message: String {
        switch self {
        case .configuration(let message), .state(let message), .bus(let message): message
        }
    }

    public var description: String { message }

    /// sysexits.h's EX_CONFIG for a configuration error, else 1.
    public var exitStatus: Int32 {
        if case .configuration = self { return 78 }
        return 1
    }
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
    /// The state directory: its lock, the database and the watch on it (`StateFile`).
    let stateFile: StateFile
    /// The open database (replaced only when its file was deleted under the daemon: `StateFile`).
    var store: StateStore { stateFile.store }
    /// Every app's authorization and the services switch (`AuthorizationService`), changed only once saved.
    var authorization: AuthorizationService
    /// Why the files on disk were rejected at the last reload (the previous configuration stays in force); nil
    /// once a reload succeeds.
    var rejectedConfiguration: String?

    /// The bus face (`BusFace`): connection, exported objects, signals out; nil before start and after shutdown.
    var bus: BusFace?
    /// The registered clients and the connections watching `Admin1.Event` (`ClientRegistry`): they change only
    /// through it.
    var clients = ClientRegistry()
    /// The pipeline every client's regions and ranging run in; changed only through its methods.
    var engine: BeaconEngine
    /// When the scanner runs and what it is doing (`ScanControl`); the two below change only as it says.
    var scanControl = ScanControl()
    var scanner: (any BeaconScanner)?

    /// What must reach the state database and has not yet (`StateJournal`; committed by `BeaconDaemon+State`).
    var journal = StateJournal()
    /// Every timer, by name (`DaemonTimer`); each fires into `timerFired`.
    var timers: TimerSet<DaemonTimer>
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
    public init(
        options: DaemonOptions, loop: MainLoop, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp = BeaconDaemon.wallClock
    ) throws(DaemonStartError) {
        self.options = options
        self.loop = loop
        self.logger = logger
        self.clock = clock
        startedAt = clock()
        do {
            configuration = try ConfigurationLoader.load(directory: options.configDirectory, scanner: options.scanner)
        } catch {
            throw .configuration("\(error)")
        }
        do {
            stateFile = try StateFile(directory: options.stateDirectory, logger: logger)
            authorization = AuthorizationService(
                records: try stateFile.store.loadAll(),
                servicesSwitch: try stateFile.store.locationServicesSwitch())
        } catch {
            throw .state("\(error)")
        }
        timers = TimerSet(loop: loop)
        engine = BeaconEngine(Self.monitoringConfiguration(configuration))
        (failures, failureContinuation) = AsyncStream.makeStream()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        if let note = stateFile.store.recoveryNote { logger.error("\(note)") }
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
            throw .state("\(error)")
        }
        let connection: DBusConnection
        do {
            connection = try DBusConnection(options.bus)
        } catch {
            throw .bus("cannot connect to the \(Self.describe(options.bus)): \(error.message)")
        }
        let uniqueName = connection.uniqueName
        let bus: BusFace
        do {
            bus = BusFace(
                connection: connection, server: try DBusObjectServer(connection: connection, loop: loop), logger: logger,
                clock: clock, flushDue: { [unowned self] in self.flushSoon() })
        } catch {
            throw .bus("cannot serve on the bus: \(error)")
        }
        self.bus = bus
        bus.server.connectionClosed = { name in
            self.assumeIsolated { $0.connectionClosed(name) }
        }
        bus.server.disconnected = {
            self.assumeIsolated { $0.busDisconnected() }
        }
        bus.server.export(managerObject())
        let ownership: DBusConnection.NameOwnership
        do {
            ownership = try bus.connection.requestName(BeacondBus.name)
        } catch {
            throw .bus(
                "cannot own \(BeacondBus.name): \(error.message). On the system bus the D-Bus "
                    + "policy /usr/share/dbus-1/system.d/org.beacond.conf must let this user own it (make install puts it there)")
        }
        guard ownership == .primaryOwner || ownership == .alreadyOwner else {
            throw .bus(
                "another beacond already owns \(BeacondBus.name) on the \(Self.describe(options.bus)); "
                    + "stop it first (systemctl stop beacond)")
        }
        // Resumed regions need the scanner; anything their restore left to save is saved now.
        stateFile.watch(on: loop) {
            self.assumeIsolated { daemon in
                // Deferred: the event may come while the directory is half removed (rm -rf is still running).
                daemon.loop.execute { daemon.assumeIsolated { $0.checkStateFile() } }
            }
        }
        startMQTT()
        engineChanged([])
        commitState()
        dropExpiredQueuedEvents()
        scheduleQueueExpiry()
        logger.info(
            "beacond \(BeacondVersion.current) serving \(BeacondBus.name) on the \(Self.describe(options.bus))",
            metadata: [
                "bus.unique_name": "\(uniqueName)", "scanner": "\(configuration.scanner)",
                "config.directory": "\(options.configDirectory)", "state.directory": "\(options.stateDirectory)",
            ])
    }

    /// Stops scanning and leaves the bus.
    public func shutdown() {
        stopMQTT()
        perform(scanControl.shutdown())
        timers.cancelAll()
        markSeenRegionsChanged()
        commitState(.powerLoss, force: true)
        flushOutbox()
        bus?.close()
        // The last write is done: the state directory is free for the next beacond.
        stateFile.close()
        bus = nil
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

    // MARK: Timers

    /// Arms the named timer: it fires into `timerFired`.
    func arm(_ timer: DaemonTimer, at deadline: ContinuousClock.Instant) {
        timers.arm(timer, at: deadline) {
            self.assumeIsolated { $0.timerFired(timer) }
        }
    }

    func timerFired(_ timer: DaemonTimer) {
        timers.fired(timer)
        switch timer {
        case .engine:
            engineChanged(engine.advance(to: clock()))
        case .scannerRetry:
            perform(scanControl.retryDue(needsScanning: needsScanning))
        case .lastSeenSave:
            markSeenRegionsChanged()
            commitState()
        case .stateRetry:
            journal.retryIsDue()
            commitState()
        case .queueExpiry:
            dropExpiredQueuedEvents()
            scheduleQueueExpiry()
        }
    }

    // MARK: Signals out

    /// Flushes after the current dispatch (a method's reply goes first).
    nonisolated func flushSoon() {
        loop.execute { self.assumeIsolated { $0.flushOutbox() } }
    }

    /// A state change waits for the next flush, which commits it.
    func scheduleFlush() {
        bus?.scheduleFlushIfNeeded()
    }

    /// Commits the state the signals report, then sends them, then commits what sending them settles.
    func flushOutbox() {
        commitState()
        defer {
            if journal.signalsSent() { commitState() }
        }
        bus?.send()
    }

    func notify(_ session: ClientSession, _ event: ClientEvent, _ audience: Audience = .clientAndAdministrators) {
        bus?.notify(ClientAddress(session), event, audience)
    }

    func notify(_ event: AdminEvent) {
        bus?.notify(event)
    }

    /// The client's properties as they are now (read from the registry, not from a caller's copy).
    func clientPropertiesChanged(_ number: Int, _ names: [ClientPropertyName]) {
        guard let session = clients[number] else { return }
        bus?.propertiesChanged(
            ClientAddress(session),
            names.map { name in
                switch name {
                case .authorizationStatus: .authorizationStatus(effectiveStatus(session.appID))
                case .inUse: .inUse(session.inUse)
                case .monitoredRegions: .monitoredRegions
                case .rangedConstraints: .rangedConstraints
                }
            })
    }
}

extension BeaconDaemon {
    /// A round trip through the loop (the watchdog pings systemd only when this returns).
    public func ping() {}
}

/// A client property by name; `clientPropertiesChanged` reads its value as it is now.
enum ClientPropertyName {
    case authorizationStatus, inUse, monitoredRegions, rangedConstraints
}
