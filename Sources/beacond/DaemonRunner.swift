import ArgumentParser
import BeacondService
import DBus
import Logging
import ServiceLifecycle
import UnixSignals

/// Runs the daemon under swift-service-lifecycle: graceful SIGTERM/SIGINT, SIGHUP reload, the systemd
/// watchdog (pinged only after a round trip through the daemon's loop, so a stuck loop is noticed) and exit
/// statuses systemd can act on.
enum DaemonRunner {
    static func run(options: DaemonOptions, logger: Logger) async throws {
        let loop: MainLoop
        let daemon: BeaconDaemon
        do {
            loop = try MainLoop()
            daemon = try BeaconDaemon(options: options, loop: loop, logger: logger)
        } catch let error as DaemonStartError {
            logger.critical("cannot start: \(error.message)")
            throw ExitCode(error.isConfigurationError ? 78 : 1)
        }
        try loop.startThread()
        // SIGHUP is trapped before the name is taken: systemd (Type=dbus) counts the service as started once it
        // owns org.beacond, and a reload sent from then on must not meet SIGHUP's default action (termination).
        // The sequence buffers a signal until the service reads it.
        let reloadSignals = await UnixSignalsSequence(trapping: .sighup)
        do {
            try await daemon.start()
        } catch {
            logger.critical("cannot start: \(error.message)")
            loop.stopAndWait()
            throw ExitCode(1)
        }
        let service = DaemonService(daemon: daemon, reloadSignals: reloadSignals, logger: logger)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        var failure: (any Error)?
        do { try await group.run() } catch { failure = error }
        SystemdNotifier.notify("STOPPING=1")
        await daemon.shutdown()
        loop.stopAndWait()
        if let failure {
            logger.critical("beacond failed: \(failure)")
            throw ExitCode(1)
        }
    }
}

struct DaemonFailure: Error, CustomStringConvertible {
    var description: String
}

/// The running daemon as a `Service`.
struct DaemonService: Service {
    let daemon: BeaconDaemon
    /// SIGHUP, trapped since before the daemon took its name.
    let reloadSignals: UnixSignalsSequence
    let logger: Logger

    func run() async throws {
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
