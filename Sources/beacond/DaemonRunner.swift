import ArgumentParser
import BeacondService
import BeacondCore
import Logging
import MainLoopKit
import ServiceLifecycle

/// Runs the daemon under swift-service-lifecycle: its services in dependency order (`DaemonServices`), graceful
/// SIGTERM/SIGINT, and exit statuses systemd can act on.
enum DaemonRunner {
    static func run(options: DaemonOptions, logger: Logger) async throws {
        let loop: MainLoop
        let daemon: BeaconDaemon
        do {
            loop = try MainLoop()
            daemon = try BeaconDaemon(options: options, loop: loop, logger: logger)
            try loop.startThread()
        } catch let error as DaemonStartError {
            logger.critical("cannot start: \(error.message)")
            throw ExitCode(error.exitStatus)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
        do {
            try await runGroup(loop: loop, daemon: daemon, logger: logger)
        } catch let start as DaemonStartError {
            logger.critical("cannot start: \(start.message)")
            throw ExitCode(start.exitStatus)
        } catch {
            logger.critical("beacond failed: \(error)")
            throw ExitCode(1)
        }
    }

    /// Runs the services until SIGTERM or SIGINT (or until one fails: then rethrows its error once all have stopped).
    static func runGroup(loop: MainLoop, daemon: BeaconDaemon, logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: DaemonServices.inDependencyOrder(loop: loop, daemon: daemon, logger: logger),
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
