@testable import BeacondService
import DBus
import Foundation
import Logging
import MainLoopKit
import ServiceLifecycle
import Synchronization
import TestKit
import Testing

@testable import beacond

/// beacond's services as `beacond` runs them (`DaemonServices`, a real `ServiceGroup`), in-process on a private
/// bus: what each stop leaves behind, and in which order the parts stop.
@Suite("beacond's services stop in dependency order")
struct DaemonServicesTests {
    /// Every log message, in order, from every thread.
    final class LogRecord: @unchecked Sendable {
        let messages = Mutex<[String]>([])
        var all: [String] { messages.withLock { $0 } }
        func index(of message: String) -> Int? { all.firstIndex(of: message) }
    }

    struct RecordingHandler: LogHandler {
        let record: LogRecord
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            record.messages.withLock { $0.append(event.message.description) }
        }
    }

    /// A daemon built as `DaemonRunner` builds it, with its services in a group that is not yet running.
    struct Services {
        let bus: PrivateBus
        let stateDirectory: String
        let record = LogRecord()
        let loop: MainLoop
        let daemon: BeaconDaemon
        let group: ServiceGroup
        var database: String { stateDirectory + "/" + StateStore.databaseFileName }

        init() throws {
            bus = try PrivateBus()
            let configDirectory = bus.directory.appendingPathComponent("config").path
            stateDirectory = bus.directory.appendingPathComponent("state").path
            try FileManager.default.createDirectory(atPath: configDirectory + "/apps.d", withIntermediateDirectories: true)
            let logger = Logger(label: "beacond-test", factory: { [record] _ in RecordingHandler(record: record) })
            loop = try MainLoop()
            daemon = try BeaconDaemon(
                options: DaemonOptions(
                    bus: .address(bus.address), configDirectory: configDirectory, stateDirectory: stateDirectory,
                    scanner: .fifo(path: bus.directory.appendingPathComponent("fifo").path)),
                loop: loop, logger: logger)
            try loop.startThread()
            group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: DaemonServices.inDependencyOrder(loop: loop, daemon: daemon, logger: logger), logger: logger))
        }

        /// Waits until org.beacond is owned: the daemon serves. Sleeps between looks rather than blocking: the
        /// daemon's start needs the concurrency pool's threads that a blocking wait would hold.
        func waitUntilServing() async throws {
            let connection = try DBusConnection(.address(bus.address))
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let reply = try? connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "NameHasOwner", arguments: [.string("org.beacond")])
                if reply?.first == .boolean(true) { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure("beacond never took org.beacond; it logged \(record.all)")
        }

        /// What a stop must leave: the write-ahead log folded into the file and removed (the database was
        /// closed), the directory free for the next beacond, and the parts stopped daemon first, loop last.
        func expectStoppedInOrder() throws {
            #expect(
                !FileManager.default.fileExists(atPath: database + "-wal"),
                "the state database was left open: its write-ahead log outlived the stop")
            #expect(throws: Never.self) { _ = try StateDirectoryLock(directory: stateDirectory) }
            let daemonStopped = try #require(record.index(of: "beacond stopped"), "\(record.all)")
            let stateClosed = try #require(record.index(of: "state database closed"), "\(record.all)")
            let loopStopped = try #require(record.index(of: "main loop stopped"), "\(record.all)")
            #expect(daemonStopped < stateClosed && stateClosed < loopStopped, "\(record.all)")
            #expect(!record.all.contains { $0.contains("the state database is closed") }, "\(record.all)")
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test("a graceful shutdown stops the daemon, then closes the state database, then stops the loop")
    func gracefulShutdown() async throws {
        let services = try Services()
        let group = services.group
        let running = Task { try await group.run() }
        try await services.waitUntilServing()
        // The fault the order guards against is possible: while beacond runs, its commits sit in the log.
        #expect(FileManager.default.fileExists(atPath: services.database + "-wal"))
        await group.triggerGracefulShutdown()
        try await running.value
        try services.expectStoppedInOrder()
    }

    @Test("a daemon that fails (its bus went away) shuts the group down in the same order, and the group throws why")
    func failureShutsDownInOrder() async throws {
        let services = try Services()
        let group = services.group
        let running = Task { try await group.run() }
        try await services.waitUntilServing()
        kill(services.bus.pid, SIGKILL)
        await #expect {
            try await running.value
        } throws: { error in
            "\(error)".contains("bus connection was closed")
        }
        try services.expectStoppedInOrder()
    }

    @Test("a daemon that cannot start (no bus) stops the rest all the same, and the group throws its start error")
    func startFailureShutsDownInOrder() async throws {
        let services = try Services()
        kill(services.bus.pid, SIGKILL)
        let bus = services.bus.directory.appendingPathComponent("bus").path
        #expect(eventually { access(bus, F_OK) != 0 || Self.connectRefused(bus) })
        let group = services.group
        await #expect {
            try await group.run()
        } throws: { error in
            (error as? DaemonStartError)?.message.contains("cannot connect") == true
        }
        try services.expectStoppedInOrder()
    }

    /// Whether connecting to the Unix socket at `path` is refused (its server is gone, the file left behind).
    static func connectRefused(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result != 0
    }
}
