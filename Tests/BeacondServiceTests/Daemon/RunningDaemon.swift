import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import DBus
import Foundation
import GRDB
import Logging
import MainLoopKit
import TestKit

/// A `BeaconDaemon` on its own main loop, serving a private bus, with a temporary configuration (exit timeout
/// 1 s unless said otherwise, the caller's own group as admin_group, one app that may ask for Always) and state
/// directory, and the `fifo:` scanner. The daemon is the real one: only the radio is replaced by hex lines written
/// to the fifo.
final class RunningDaemon: @unchecked Sendable {
    static let app = "org.example.Demo"
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    let bus: PrivateBus
    let directory: URL
    var configDirectory: String { directory.appendingPathComponent("config").path }
    var stateDirectory: String { directory.appendingPathComponent("state").path }
    var fifo: String { directory.appendingPathComponent("fifo").path }
    private(set) var loop: MainLoop?
    private(set) var daemon: BeaconDaemon?
    /// `[monitoring] exit_timeout`, in seconds.
    let exitTimeout: Int

    /// A new bus and directories, nothing started.
    /// `settings`: more of beacond.toml, after `[monitoring] exit_timeout` (e.g. "max_regions_per_app = 5").
    /// `exitTimeout`: a test that needs no exit takes a long one, so a busy machine's slow step is no exit.
    init(settings: String = "", exitTimeout: Int = 1) throws {
        self.exitTimeout = exitTimeout
        bus = try PrivateBus()
        directory = bus.directory.appendingPathComponent("daemon")
        try FileManager.default.createDirectory(atPath: configDirectory + "/apps.d", withIntermediateDirectories: true)
        let user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
        try writeSettings(settings)
        try """
        app_id = "\(Self.app)"
        users = ["\(user)"]
        when_in_use_usage = "Shows the beacons near you while the demo is open."
        always_usage = "Tells you when you enter the demo area, also in background."

        """.write(toFile: configDirectory + "/apps.d/demo.toml", atomically: true, encoding: .utf8)
    }

    /// Rewrites beacond.toml: the test's exit timeout and admin group, then `settings` under `[monitoring]`.
    func writeSettings(_ settings: String) throws {
        let group = getgrgid(getgid()).map { String(cString: $0.pointee.gr_name) } ?? "root"
        try "[authorization]\nadmin_group = \"\(group)\"\n[monitoring]\nexit_timeout = \(exitTimeout)\n\(settings)\n"
            .write(toFile: configDirectory + "/beacond.toml", atomically: true, encoding: .utf8)
    }

    /// Starts beacond (again, after `stop`: the same state directory, as a restart).
    func start() async throws {
        let loop = try MainLoop()
        let options = DaemonOptions(
            bus: .address(bus.address), configDirectory: configDirectory,
            stateDirectory: stateDirectory, scanner: .fifo(path: fifo))
        let daemon = try BeaconDaemon(
            options: options, loop: loop,
            logger: Logger(label: "beacond-test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try loop.startThread()
        self.loop = loop
        self.daemon = daemon
        try await daemon.start()
    }

    /// A graceful stop, as on SIGTERM. Returns once the bus has freed org.beacond: the daemon's connection closes
    /// when the daemon is released, which a busy thread pool may delay past this point, and a `start` that followed
    /// at once would find the name still owned (a restarted process always finds it free: its old socket is gone).
    func stop() async {
        let wasRunning = daemon != nil
        await daemon?.shutdown()
        await daemon?.closeStateDirectory()
        loop?.stopAndWait()
        daemon = nil
        loop = nil
        guard wasRunning, let watcher = try? DBusConnection(.address(bus.address)) else { return }
        _ = await eventually { (try? watcher.nameHasOwner(BeacondBus.name)) == false }
    }

    /// One advertising report of beacon 1/`minor` at −60 dBm, written as the fifo scanner reads it. Waits for
    /// the daemon to have made the fifo (it does when it starts).
    func advertise(minor: UInt16) async throws {
        guard await eventually({ access(fifo, F_OK) == 0 }) else { throw TestFailure("beacond never made \(fifo)") }
        let u = Self.uuid.uuid
        let ad: [UInt8] = [
            0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
            u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
            0x00, 0x01, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5,
        ]
        let event: [UInt8] =
            [0x04, 0x3E, UInt8(12 + ad.count), 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 6, UInt8(ad.count)]
            + ad + [UInt8(bitPattern: -60)]
        let line = event.map { String(format: "%02x", $0) }.joined(separator: " ") + "\n"
        let fd = open(fifo, O_WRONLY | O_NONBLOCK)
        guard fd >= 0 else { throw TestFailure("cannot open \(fifo): errno \(errno)") }
        defer { close(fd) }
        let written = line.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, line.utf8.count) }
        guard written == line.utf8.count else { throw TestFailure("wrote \(written) of \(line.utf8.count) bytes") }
    }

    /// What the state database says of a region now (read beside the running daemon, as another process would).
    func savedState(client: Int, identifier: String) throws -> String? {
        let queue = try DatabaseQueue(
            path: stateDirectory + "/" + SQLiteStateDatabase.databaseFileName,
            configuration: {
                var c = Configuration(); c.readonly = true; return c
            }())
        return try queue.read { db in
            try String.fetchOne(
                db, sql: "SELECT state FROM monitored_region WHERE client = ? AND identifier = ?",
                arguments: [client, identifier])
        }
    }

    /// How many regions the state database holds.
    func savedRegionCount() throws -> Int {
        let queue = try DatabaseQueue(
            path: stateDirectory + "/" + SQLiteStateDatabase.databaseFileName,
            configuration: {
                var c = Configuration(); c.readonly = true; return c
            }())
        return try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM monitored_region") ?? 0 }
    }

    /// `Admin1.Reload`: "" or why the files were rejected.
    func reload() throws -> String {
        let admin = try DBusConnection(.address(bus.address))
        return try TestClient.string(
            admin.call(
                destination: BeacondBus.name, path: BeacondBus.managerPath,
                interface: BeacondInterface.admin, member: BeacondMember.reload))
    }

    /// A region dictionary for beacon 1/`minor`.
    static func region(_ identifier: String, minor: UInt16) throws -> DBusValue {
        BeaconDictionaries.dictionary(
            try BeaconRegion(
                identifier: identifier,
                constraint: BeaconIdentityConstraint(uuid: uuid, major: 1, minor: minor)))
    }
}

/// A client program: its own connection, registered as the demo app, reading the signals beacond sends it.
final class TestClient {
    let connection: DBusConnection
    let path: String

    init(_ daemon: RunningDaemon) throws {
        connection = try DBusConnection(.address(daemon.bus.address))
        path = try Self.string(
            connection.call(
                destination: BeacondBus.name, path: BeacondBus.managerPath,
                interface: BeacondInterface.manager, member: BeacondMember.registerClient,
                arguments: [.string(RunningDaemon.app)]))
    }

    static func string(_ reply: [DBusValue]) throws -> String {
        switch reply.first {
        case .string(let text)?, .objectPath(let text)?: return text
        default: throw TestFailure("expected a string or path, got \(reply)")
        }
    }

    @discardableResult
    func call(_ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        try connection.call(
            destination: BeacondBus.name, path: path, interface: BeacondInterface.locationManager,
            member: member, arguments: arguments)
    }

    func property(_ name: String) throws -> DBusValue? {
        let reply = try connection.call(
            destination: BeacondBus.name, path: path, interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string(BeacondInterface.locationManager), .string(name)])
        if case .variant(let value)? = reply.first { return value }
        return reply.first
    }

    /// The identifiers in `MonitoredRegions`.
    func monitoredIdentifiers() throws -> [String] {
        guard case .array(_, let regions)? = try property(BeacondMember.monitoredRegions) else { return [] }
        return regions.compactMap { region -> String? in
            guard case .dictionary(_, _, let entries) = region else { return nil }
            for entry in entries where entry.key == .string(BeacondKey.identifier) {
                if case .variant(.string(let identifier)) = entry.value { return identifier }
                if case .string(let identifier) = entry.value { return identifier }
            }
            return nil
        }
    }

    /// The next LocationManager1 signal named `member` for this client, or nil after `timeout`.
    func next(_ member: String, timeout: Duration = .seconds(10)) throws -> DBusMessage? {
        try connection.nextMessage(timeout: timeout) { message in
            message.kind == .signal && message.path == path && message.member == member
        }
    }

    /// Every signal for this client, in the order they came, up to and including the first `member` about region
    /// `identifier`: the marker that shows what came before it has all come (beacond sends a client's signals in
    /// the order it decided them, over one connection, and the bus keeps one sender's order to one receiver).
    /// Throws when the marker has not come within `timeout` (a bound for giving up, generous for loaded machines).
    func signals(through member: String, region identifier: String, timeout: Duration = .seconds(10)) throws -> [Signal] {
        var signals: [Signal] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero,
                let message = try connection.nextMessage(timeout: remaining, where: { $0.kind == .signal && $0.path == self.path })
            else {
                throw TestFailure("no \(member) for \(identifier) within \(timeout); signals before: \(signals)")
            }
            let signal = Signal(member: message.member ?? "", region: try Self.regionIdentifier(message))
            signals.append(signal)
            if signal == Signal(member: member, region: identifier) { return signals }
        }
    }

    /// A signal by its member and the identifier of the region it is about (nil: about none).
    struct Signal: Equatable, CustomStringConvertible {
        var member: String
        var region: String?
        var description: String { "\(member)(\(region ?? "-"))" }
    }

    /// The identifier in the signal's region dictionary (DidEnterRegion's first argument, DidDetermineState's second).
    static func regionIdentifier(_ message: DBusMessage) throws -> String? {
        for argument in try message.arguments() {
            guard case .dictionary(_, _, let entries) = argument else { continue }
            for entry in entries where entry.key == .string(BeacondKey.identifier) {
                if case .variant(.string(let identifier)) = entry.value { return identifier }
                if case .string(let identifier) = entry.value { return identifier }
            }
        }
        return nil
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
