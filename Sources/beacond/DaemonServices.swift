import BeacondService
import BeacondCore
import Logging
import MainLoopKit
import ServiceLifecycle
import UnixSignals

/// beacond's long-running parts as services, in dependency order: the main loop (everything runs on its thread),
/// the state directory (the database the daemon writes to until its last moment), the daemon (bus, scanner,
/// `[mqtt]` node). A `ServiceGroup` stops them in reverse order, each once the one after it has finished, so the
/// daemon has written its last state and left the bus before the database is closed, and the database is closed
/// before the loop stops. A service that fails shuts the whole group down the same way. The scanner and the
/// `[mqtt]` node are not services of their own: the core starts and stops them while the daemon runs (scanning
/// on demand, the node on reload), and the daemon stops both first when it stops.
enum DaemonServices {
    static func inDependencyOrder(
        loop: MainLoop, daemon: BeaconDaemon, logger: Logger
    ) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        [
            .init(service: MainLoopService(loop: loop, logger: logger), failureTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: StateDirectoryService(daemon: daemon), failureTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: DaemonService(daemon: daemon), failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
    }
}

/// The main loop's thread. Started before the group runs (the daemon's start is the first work queued on it, and
/// a loop that never ran would leave that start waiting forever); stopped last, when nothing runs on it any more.
struct MainLoopService: Service, CustomStringConvertible {
    let loop: MainLoop
    let logger: Logger
    var description: String { "main loop" }

    func run() async throws {
        // Shut down gracefully or cancelled alike: every service after it in the group has stopped by now.
        try? await gracefulShutdown()
        loop.stopAndWait()
        logger.debug("main loop stopped")
    }
}

/// The state directory: opened (locked, database read) when the daemon is made, before the group, so that an
/// unusable directory is a start error; closed once the daemon has stopped, so its last write is in the file.
struct StateDirectoryService: Service, CustomStringConvertible {
    let daemon: BeaconDaemon
    var description: String { "state directory" }

    func run() async throws {
        try? await gracefulShutdown()
        await daemon.closeStateDirectory()
    }
}

/// Raised when the daemon cannot go on (its bus went away): the group shuts down and beacond exits non-zero.
struct DaemonFailure: Error, CustomStringConvertible {
    var description: String
}

/// The daemon on the bus: started (bus name taken) once every signal beacond handles is trapped, stopped (state
/// written, bus left) when the group shuts down, when the daemon fails, or when its start fails.
struct DaemonService: Service, CustomStringConvertible {
    let daemon: BeaconDaemon
    var description: String { "beacond" }

    func run() async throws {
        // ServiceGroup traps SIGTERM and SIGINT before it runs services; SIGHUP is trapped here, before the bus
        // name is taken. systemd (Type=dbus) counts the service as started when org.beacond is owned, so a stop or
        // reload sent from then on must not meet the signal's default action (termination). The sequence buffers
        // a signal until it is read.
        let reloadSignals = await UnixSignalsSequence(trapping: .sighup)
        do {
            try await serve(reloadSignals)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    private func stop() async {
        SystemdNotifier.notify("STOPPING=1")
        await daemon.shutdown()
    }

    private func serve(_ reloadSignals: UnixSignalsSequence) async throws {
        try await daemon.start()
        SystemdNotifier.notify("READY=1")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in reloadSignals {
                    SystemdNotifier.notify("RELOADING=1")
                    await daemon.reload()
                    SystemdNotifier.notify("READY=1")
                }
            }
            group.addTask {
                for await reason in daemon.failures { throw DaemonFailure(description: reason) }
            }
            if let interval = SystemdNotifier.watchdogInterval {
                group.addTask {
                    // Pinged only after a round trip through the daemon's loop, so a stuck loop is noticed.
                    while !Task.isCancelled {
                        await daemon.ping()
                        SystemdNotifier.notify("WATCHDOG=1")
                        try await Task.sleep(for: interval)
                    }
                }
            }
            group.addTask { try await gracefulShutdown() }
            try await group.next()
            group.cancelAll()
        }
    }
}
