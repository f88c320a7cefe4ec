public import BeaconKit
import BeacondAPI
import Fleet
import DBus
public import MainLoopKit
public import Logging
import Foundation
import BeacondCore

/// The daemon's runtime: it feeds everything that happens (D-Bus calls, scanner input, the `[mqtt]` node's
/// readings, timers, peers leaving, reloads) to the core (`DaemonCore`), which decides, and carries out the effects
/// the core returns with the resources it owns: the bus face, the scanner, the `[mqtt]` node, the state file and
/// the timers. It is an actor running on the `MainLoop`'s thread, so D-Bus callbacks, scanner input and timers (all
/// on that thread) enter it synchronously, and everything it owns is touched by one thread.
public actor BeaconDaemon {
    nonisolated let loop: MainLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    let options: DaemonOptions
    let logger: Logger
    let clock: @Sendable () -> Timestamp
    /// When this daemon started (status says it).
    let startedAt: Timestamp

    /// What the daemon decides: clients, engine, authorization, scan control, delivery, the journal. Only this
    /// file hands it inputs; everyone else reads `view`.
    private var core: DaemonCore
    /// What the bus and the other adapters may read of the core.
    var view: CoreView { CoreView(core) }
    /// Where the daemon is in its life; the bus face exists only while it serves.
    var lifecycle: DaemonLifecycle = .loaded
    /// The bus face (`BusFace`): connection, exported objects, signals out.
    var bus: BusFace? {
        if case .serving(let bus) = lifecycle { bus } else { nil }
    }
    /// The state directory: its lock, the database and the watch on it (`StateDatabaseFile`). Private: no adapter
    /// reads the database; they read `view`.
    private let stateDatabase: StateDatabaseFile
    /// What the effects are carried out with, besides the bus face and the state database: the scanner, the
    /// `[mqtt]` node and the timers.
    var resources: Resources

    struct Resources {
        /// The scanner while one is made (the core's scan control says when).
        var scanner: (any BeaconScanner)?
        /// This daemon as a receiver on the MQTT broker of `[mqtt]` (nil while it is off); `BeaconDaemon+MQTT` only.
        var mqttNode: MQTTNode?
        /// The loop's handle of every armed timer, by name (`DaemonTimer`; when each fires is the core's to know).
        var timers: TimerSet<DaemonTimer>
    }

    /// Fatal conditions after start (the bus went away): `beacond` exits non-zero so systemd restarts it.
    public nonisolated var failures: AsyncStream<String> { failureChannel.stream }
    nonisolated let failureChannel: (stream: AsyncStream<String>, continuation: AsyncStream<String>.Continuation)
    #if DEBUG
        /// Set while `run` carries out an input: re-entering it is a bug (tests, which run debug builds, trap on it).
        private var running = false
    #endif

    /// Loads configuration and state; throws a configuration error (exit 78) or a state error.
    public init(
        options: DaemonOptions, loop: MainLoop, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp = WallClock.now
    ) throws(DaemonStartError) {
        self.options = options
        self.loop = loop
        self.logger = logger
        self.clock = clock
        let configuration: DaemonConfiguration
        do {
            configuration = try ConfigurationLoader.load(
                directory: options.configDirectory, scanner: options.scanner, makeFIFO: true)
        } catch {
            throw .configuration("\(error)")
        }
        let authorization: AuthorizationService
        do {
            stateDatabase = try StateDatabaseFile(directory: options.stateDirectory, logger: logger)
            authorization = AuthorizationService(
                records: try stateDatabase.store.loadAll(),
                servicesSwitch: try stateDatabase.store.locationServicesSwitch())
        } catch {
            throw .state("\(error)")
        }
        startedAt = clock()
        core = DaemonCore(
            configuration: configuration, authorization: authorization, configDirectory: options.configDirectory,
            database: stateDatabase, now: startedAt)
        resources = Resources(timers: TimerSet(loop: loop))
        failureChannel = AsyncStream.makeStream()
        for warning in configuration.warnings { logger.warning("\(warning)") }
        if let note = stateDatabase.store.recoveryNote { logger.error("\(note)") }
    }

    // MARK: Start and stop

    /// Connects to the bus, exports the objects, then takes the name (so the first call can be answered).
    public func start() throws(DaemonStartError) {
        do {
            carryOut(try core.restoreRegions(at: clock()))
        } catch {
            carryOut(core.takeEffects())
            throw .state("\(error)")
        }
        let connection: DBusConnection
        do {
            connection = try DBusConnection(options.bus)
        } catch {
            throw .bus("cannot connect to the \(DaemonOptions.describe(options.bus)): \(error.message)")
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
        lifecycle = .serving(bus)
        bus.server.connectionClosed = { name in
            self.assumeIsolated { daemon in
                daemon.bus?.forget(name)
                daemon.run(.connectionClosed(name))
            }
        }
        bus.server.disconnected = {
            self.assumeIsolated { $0.busDisconnected() }
        }
        bus.server.export(ExportedObjects(daemon: self).managerObject())
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
                "another beacond already owns \(BeacondBus.name) on the \(DaemonOptions.describe(options.bus)); "
                    + "stop it first (" + BeacondAdvice.stop(pid: "") + ")")
        }
        stateDatabase.watch(on: loop) {
            self.assumeIsolated { daemon in
                // Deferred: the event may come while the directory is half removed (rm -rf is still running).
                daemon.loop.execute { daemon.receive(.checkStateDatabase) }
            }
        }
        run(startMQTT())
        // Resumed regions need the scanner; anything their restore left to save is saved now.
        run(.started)
        logger.info(
            "beacond \(BeacondVersion.current) serving \(BeacondBus.name) on the \(DaemonOptions.describe(options.bus))",
            metadata: [
                "bus.unique_name": "\(uniqueName)", "scanner": "\(view.configuration.scanner)",
                "config.directory": "\(options.configDirectory)", "state.directory": "\(options.stateDirectory)",
            ])
    }

    /// Stops scanning and the `[mqtt]` node, writes the last state, leaves the bus; the state stays open for now.
    public func shutdown() {
        run(stopMQTT())
        run(.shuttingDown)
        resources.timers.cancelAll()
        flushOutbox()
        bus?.close()
        lifecycle = .stopped
        failureChannel.continuation.finish()
        logger.info("beacond stopped")
    }

    /// The last write is done: closes the state database and frees the directory for the next beacond.
    public func closeStateDirectory() {
        do { try stateDatabase.close() } catch { return logger.error("\(error)") }
        logger.debug("state database closed", metadata: ["state.file": "\(stateDatabase.file)"])
    }

    func busDisconnected() {
        logger.critical("the D-Bus connection was closed; exiting so the service manager restarts beacond")
        failureChannel.continuation.yield("the bus connection was closed")
    }

    // MARK: Inputs in, effects out

    /// Hands one input to the core and carries out what it decided, then each input those effects produced (a
    /// scanner that started, an `[mqtt]` node made or stopped), in the order they came: one loop, never re-entered.
    /// Every callback of the scanner, the node, the bus and the timers comes later from the main loop, so none
    /// arrives while effects are being carried out. The reply when the input was a call.
    @discardableResult
    func run(_ input: DaemonInput) -> Result<CallReply, CallError>? {
        #if DEBUG
            precondition(!running, "BeaconDaemon.run re-entered with \(input)")
            running = true
            defer { running = false }
        #endif
        let step = core.handle(input, at: clock())
        carryOut(step.effects)
        return step.reply
    }

    /// Carries out effects, and the effects of the inputs they produce, until none is left.
    private func carryOut(_ effects: [DaemonEffect]) {
        var produced = execute(effects)
        while !produced.isEmpty {
            let next = produced.removeFirst()
            produced += execute(core.handle(next, at: clock()).effects)
        }
    }

    /// Feeds an input from a callback on the loop thread (scanner, `[mqtt]` node, timer, bus).
    nonisolated func receive(_ input: DaemonInput) {
        assumeIsolated { _ = $0.run(input) }
    }

    /// Carries out the core's effects in order; returns the inputs they produced, for `run` to hand to the core next.
    func execute(_ effects: [DaemonEffect]) -> [DaemonInput] {
        var produced: [DaemonInput] = []
        for effect in effects {
            switch effect {
            case .notify(let client, let event, let audience):
                bus?.notify(client, event, audience)
            case .adminEvent(let event):
                bus?.notify(event)
            case .clientPropertiesChanged(let client, let properties):
                bus?.propertiesChanged(client, properties)
            case .managerPropertyChanged(let property):
                bus?.propertyChanged(property)
            case .range(let client, let constraint, let reports):
                guard let bus else { continue }
                let audience = bus.rangingAudience(client, constraint: constraint, beacons: reports.count, first: reports.first)
                guard !audience.isEmpty else { continue }
                bus.range(client, constraint: constraint, reports, to: audience)
            case .exportClient(let number):
                bus?.server.export(ExportedObjects(daemon: self).clientObject(number))
            case .unexportClient(let path):
                bus?.server.unexport(path: path)
            case .activate(let name, let appID):
                bus?.activate(name, for: appID)
            case .arm(let timer, let deadline):
                let delay = deadline - clock()
                resources.timers.arm(timer, at: .now + (delay > .zero ? delay : .zero)) {
                    self.assumeIsolated { daemon in
                        daemon.resources.timers.fired(timer)
                        daemon.run(.timerFired(timer))
                    }
                }
            case .cancel(let timer):
                resources.timers.cancel(timer)
            case .startScanner:
                produced += startScanner()
            case .stopScanner:
                resources.scanner?.stop()
                resources.scanner = nil
            case .publishReading(let reading, let distance):
                resources.mqttNode?.publish(reading, distance: distance)
            case .publishRetained(let publications):
                resources.mqttNode?.publishRetained(publications)
            case .mqttSettingsChanged:
                let known = resources.mqttNode?.directory.receivers ?? []
                produced.append(stopMQTT())
                produced.append(startMQTT(knownReceivers: known))
            case .scheduleFlush:
                bus?.scheduleFlushIfNeeded()
            case .log(let level, let message, let metadata):
                logger.log(level: level, "\(message)", metadata: metadata)
            }
        }
        return produced
    }

    // MARK: Calls

    /// SIGHUP: read the configuration again. A broken file leaves the old configuration in force (logged with
    /// file, line and problem); a good one applies at once.
    public func reload() {
        run(.call(reloadCall()))
    }

    /// The configuration read again from disk, as a call for the core (`Admin1.Reload` answers with its reply).
    func reloadCall() -> DaemonCall {
        let loaded: Result<DaemonConfiguration, ConfigurationRejection>
        do {
            loaded = .success(
                try ConfigurationLoader.load(directory: options.configDirectory, scanner: options.scanner, makeFIFO: true))
        } catch {
            loaded = .failure(ConfigurationRejection(message: "\(error)"))
        }
        return .reload(loaded)
    }

    // MARK: Signals out

    /// Flushes after the current dispatch (a method's reply goes first).
    nonisolated func flushSoon() {
        loop.execute { self.assumeIsolated { $0.flushOutbox() } }
    }

    /// Commits the state the signals report, then sends them, then commits what sending them settles.
    func flushOutbox() {
        run(.commit(.processCrash))
        bus?.send()
        run(.signalsSent)
    }

    /// A round trip through the loop (the watchdog pings systemd only when this returns).
    public func ping() {}
}
