import ArgumentParser
import BeacondService
import DBus
import MainLoopKit
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
            throw ExitCode(error.exitStatus)
        }
        try loop.startThread()
        let service = DaemonService(daemon: daemon, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        var failure: (any Error)?
        do { try await group.run() } catch { failure = error }
        SystemdNotifier.notify("STOPPING=1")
        await daemon.shutdown()
        loop.stopAndWait()
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

/// The running daemon as a `Service`.
struct DaemonService: Service {
    let daemon: BeaconDaemon
    let logger: Logger

    /// Takes the bus name only once every signal beacond handles is trapped: ServiceGroup traps SIGTERM and
    /// SIGINT before it runs services, SIGHUP is trapped here. systemd (Type=dbus) counts the service as started
    /// when org.beacond is owned, so a stop or reload sent from then on must not meet the signal's default
    /// action (termination). The SIGHUP sequence buffers a signal until it is read.
    func run() async throws {
        let reloadSignals = await UnixSignalsSequence(trapping: .sighup)
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
