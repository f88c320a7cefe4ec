import ArgumentParser
import BeacondService
import DBus
import MainLoopKit
import Logging
import ServiceLifecycle
import UnixSignals

/// Runs the daemon under swift-service-lifecycle: graceful SIGTERM/SIGINT, SIGHUP reload, the systemd
/// watchdog (pinged only after a round trip through the daemon's loop, so a stuck loop is noticed) and exit
/// statuses systemd can act on. Two services in dependency order: the main loop the daemon runs on, then the
/// daemon; the group stops them in reverse order, so the daemon has finished with the loop (its last state
/// written, its bus connection closed) before the loop stops, also when the daemon fails.
enum DaemonRunner {
    static func run(options: DaemonOptions, logger: Logger) async throws {
        let loop: MainLoop
        let daemon: BeaconDaemon
        do {
            loop = try MainLoop()
            daemon = try BeaconDaemon(options: options, loop: loop, logger: logger)
        } catch let error as DaemonStartError {
            logger.critical("cannot start: \(error.message)")
            throw ExitCode(error.exitStatus)
        }
        // Running before the group starts: the daemon's first await (its start) runs on it.
        try loop.startThread()
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: MainLoopService(loop: loop), failureTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: DaemonService(daemon: daemon, logger: logger), failureTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        var failure: (any Error)?
        do { try await group.run() } catch { failure = error }
        if let failure {
            if let start = failure as? DaemonStartError {
                logger.critical("cannot start: \(start.message)")
            } else {
                logger.critical("beacond failed: \(failure)")
            }
            throw ExitCode(1)
        }
    }
}

struct DaemonFailure: Error, CustomStringConvertible {
    var description: String
}

/// The main loop's thread (started before the group) as a `Service`: stopped when the group shuts down, after the
/// daemon that runs on it.
struct MainLoopService: Service {
    let loop: MainLoop

    func run() async throws {
        // Shut down gracefully or cancelled alike: the daemon after it in the group has stopped by now.
        try? await gracefulShutdown()
        loop.stopAndWait()
    }
}

/// The running daemon as a `Service`: started (bus name taken) once every signal it handles is trapped, stopped
/// (state written, bus left) when the group shuts down or the daemon fails.
struct DaemonService: Service {
    let daemon: BeaconDaemon
    let logger: Logger

    /// Takes the bus name only once every signal beacond handles is trapped: ServiceGroup traps SIGTERM and
    /// SIGINT before it runs services, SIGHUP is trapped here. systemd (Type=dbus) counts the service as started
    /// when org.beacond is owned, so a stop or reload sent from then on must not meet the signal's default
    /// action (termination). The SIGHUP sequence buffers a signal until it is read.
    func run() async throws {
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
