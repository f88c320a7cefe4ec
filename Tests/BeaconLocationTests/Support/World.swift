#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import Foundation
import Synchronization
import Testing
import TestKit

/// The world each test runs in: a private dbus-daemon, the real beacond (the fifo scanner in place of a radio),
/// beacons written into its fifo, and an administrator who answers with `busctl` (a real D-Bus client).
///
/// Every wait is bounded and waits for the thing itself; a bound reached is a failure. Processes are spawned and
/// reaped here (posix_spawn, waitpid), not with Foundation's Process, whose waiting can hang on Linux.
final class World: @unchecked Sendable {
    static let demo = "org.example.Demo"
    static let demoUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let settings = "[monitoring]\nexit_timeout = 2\n"
    /// The demo app's private device: a phone known by this Identity Resolving Key (most significant byte first).
    static let aliceKey = "0c1d2e3f405162738495a6b7c8d9eafb"
    static let apps = [
        "demo.toml": """
        app_id = "org.example.Demo"
        users = ["root"]
        when_in_use_usage = "Shows the beacons near you while the demo is open."
        always_usage = "Tells you when you enter the demo area, also in background."

        [devices]
        alice-phone = "irk:\(World.aliceKey)"

        """,
        "unprivileged.toml": """
        app_id = "org.example.Unprivileged"
        users = ["nobody"]
        always_usage = "Runs as nobody, to show the library needs no root."

        """,
    ]
    /// Bounds for what normally takes milliseconds (a busy machine may take seconds; never a pass when reached).
    static let wait: Duration = .seconds(20)

    let directory: URL
    let address: String
    private let bus: PrivateBus
    private let lock = Mutex<(daemon: pid_t?, logs: [String], children: [pid_t])>((nil, [], []))

    /// `activatable`: an activation file for org.beacond, so the bus starts beacond when a client asks for it (as
    /// the system bus does with the shipped org.beacond.service).
    init(settings: String = World.settings, activatable: Bool = false) throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("beacon-location-\(UUID().uuidString)")
        let apps = directory.appendingPathComponent("config/apps.d")
        try FileManager.default.createDirectory(at: apps, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        try settings.write(to: directory.appendingPathComponent("config/beacond.toml"), atomically: true, encoding: .utf8)
        for (name, text) in Self.apps {
            try text.write(to: apps.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("services"), withIntermediateDirectories: true)
        let activationLog = directory.appendingPathComponent("beacond-activated.log").path
        if activatable {
            let command = [
                // The bus tells what it starts where it is.
                try Self.binary("beacond"), "--bus", "\"$DBUS_STARTER_ADDRESS\"", "--config-dir",
                directory.appendingPathComponent("config").path, "--state-dir",
                directory.appendingPathComponent("state").path, "--scanner", "fifo:" + directory.appendingPathComponent("fifo").path,
            ].joined(separator: " ")
            try "[D-BUS Service]\nName=org.beacond\nExec=/bin/sh -c '\(command) >>\(activationLog) 2>&1'\n".write(
                to: directory.appendingPathComponent("services/org.beacond.service"), atomically: true, encoding: .utf8)
        }
        bus = try PrivateBus(everyUser: true, serviceDirectory: directory.appendingPathComponent("services").path)
        address = bus.address
        if activatable { lock.withLock { $0.logs.append(activationLog) } }
    }

    /// A world with beacond running, and the demo app's status set by an administrator if `granting` says one.
    static func running(settings: String = World.settings, granting status: String? = nil) async throws -> World {
        let world = try World(settings: settings)
        try await world.startDaemon()
        if let status { try world.grant(status) }
        return world
    }

    deinit {
        let state = lock.withLock { $0 }
        for pid in state.children + [state.daemon].compactMap({ $0 }) {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Binaries

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A product of this build: the test bundle sits next to the products in the build directory.
    static func binary(_ name: String) throws -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            directory = directory.deletingLastPathComponent()
        }
        let fallback = packageRoot.appendingPathComponent(".build/debug/\(name)")
        guard FileManager.default.isExecutableFile(atPath: fallback.path) else {
            throw Failure("\(name) is not built (swift build --build-tests builds it)")
        }
        return fallback.path
    }

    // MARK: Processes

    /// Runs `path` to its end (bounded), its stdout and stderr together.
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let file = NSTemporaryDirectory() + "beacon-location-run-\(UUID().uuidString)"
        defer { unlink(file) }
        let pid = try spawn(path, arguments, output: file, environment: environment, newSession: false)
        let deadline = ContinuousClock.now + wait
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw Failure("\(path) \(arguments.joined(separator: " ")) did not end within \(wait)")
            }
            usleep(5_000)
        }
        let output = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return ((status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), output)
    }

    static func spawn(
        _ path: String, _ arguments: [String], output: String, environment: [String: String] = [:],
        newSession: Bool = true
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if newSession { posix_spawnattr_setflags(&attributes, Int16(0x80) /* POSIX_SPAWN_SETSID (glibc), not exported to Swift */) }
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw Failure("cannot start \(path): errno \(result)") }
        return pid
    }

    /// A program of this build started in the world (`BEACOND_BUS` set to its bus), with its output in a file.
    func start(_ name: String, _ arguments: [String], prefix: [String] = []) throws -> Program {
        let log = directory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).log").path
        let path = try Self.binary(name)
        let executable = prefix.first ?? path
        let pid = try Self.spawn(
            executable, Array(prefix.dropFirst()) + (prefix.isEmpty ? [] : [path]) + arguments, output: log,
            environment: ["BEACOND_BUS": address])
        lock.withLock { $0.children.append(pid) }
        return Program(pid: pid, log: log)
    }

    // MARK: beacond

    /// beacond started; returns once it owns org.beacond (bounded).
    func startDaemon() async throws {
        let log = directory.appendingPathComponent("beacond-\(lock.withLock { $0.logs.count } + 1).log").path
        let config = directory.appendingPathComponent("config").path
        let pid = try Self.spawn(
            try Self.binary("beacond"),
            [
                "--bus", address, "--config-dir", config, "--state-dir", directory.appendingPathComponent("state").path,
                "--scanner", "fifo:" + fifo,
            ], output: log)
        lock.withLock {
            $0.daemon = pid
            $0.logs.append(log)
        }
        try await until("beacond to take org.beacond") {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { throw Failure("beacond exited \(status): \(self.daemonLog.suffix(2000))") }
            return (try? self.busctl(["status", "org.beacond"]).status) == 0
        }
    }

    /// kill -9, and reaped: the crash the client library must survive.
    func killDaemon() {
        guard let pid = lock.withLock({ $0.daemon }) else { return }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        lock.withLock { $0.daemon = nil }
    }

    /// SIGSTOP (a hung beacond: it owns its name and answers nothing) or SIGCONT.
    func signalDaemon(_ number: Int32) {
        if let pid = lock.withLock({ $0.daemon }) { kill(pid, number) }
    }

    var appsDirectory: URL { directory.appendingPathComponent("config/apps.d") }

    var daemonLog: String {
        lock.withLock { $0.logs }.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }.joined()
    }

    // MARK: An administrator

    @discardableResult
    func busctl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Self.run("/usr/bin/busctl", ["--address=\(address)"] + arguments)
    }

    @discardableResult
    func admin(_ method: String, _ signature: String = "", _ arguments: [String] = []) throws -> String {
        let result = try busctl(
            ["call", "org.beacond", "/org/beacond", "org.beacond.Admin1", method, signature] + arguments)
        guard result.status == 0 else { throw Failure("busctl \(method): \(result.output)") }
        return result.output
    }

    func grant(_ status: String = "authorizedAlways", app: String = World.demo) throws {
        try admin("SetAuthorization", "ss", [app, status])
    }

    func regions() throws -> String { try admin("ListRegions", "uu", ["0", "100"]) }
    func clients() throws -> String { try admin("ListClients", "uu", ["0", "100"]) }

    // MARK: Beacons

    /// The demo beacon comes and goes: returns once beacond saw the region (major 1) entered, then exited.
    func enterAndExit() async throws {
        let beacon = Advertiser(self)
        beacon.on()
        try await until("beacond to see the entry") { try regions().contains("\"inside\"") }
        await beacon.off()
        try await until("beacond to see the exit") { try regions().contains("\"outside\"") }
    }

    var fifo: String { directory.appendingPathComponent("fifo").path }

    /// A directory where beacond's FIFO should be: its scanner fails when it starts (and at each retry).
    func breakFifo() throws {
        unlink(fifo)
        try FileManager.default.createDirectory(atPath: fifo, withIntermediateDirectories: false)
    }

    /// The FIFO back: the next retry scans.
    func repairFifo() throws {
        guard rmdir(fifo) == 0, mkfifo(fifo, 0o660) == 0 else { throw Failure("cannot make \(fifo) a FIFO again: errno \(errno)") }
    }

    /// One sighting; false when nobody reads the fifo (beacond is not scanning).
    @discardableResult
    func advertise(major: UInt16 = 1, minor: UInt16 = 2) -> Bool {
        send(line: Self.iBeaconLine(uuid: Self.demoUUID, major: major, minor: minor))
    }

    /// One H4 LE Advertising Report carrying an iBeacon, as the fifo scanner's hex line (as Tests/Integration/hci.py).
    static func iBeaconLine(uuid: UUID, major: UInt16, minor: UInt16, rssi: Int8 = -56) -> String {
        let u = uuid.uuid
        let uuidBytes = [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
        let frame: [UInt8] =
            [0x4C, 0x00, 0x02, 0x15] + uuidBytes
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
        let data: [UInt8] = [0x02, 0x01, 0x06, UInt8(frame.count + 1), 0xFF] + frame
        return reportLine(data: data, address: 0xC0FF_EE00_0001, addressType: 1, rssi: rssi)
    }

    /// One H4 LE Advertising Report (ADV_NONCONN_IND) of `data` from `address` (its 48 bits, most significant
    /// first as written), as the fifo scanner's hex line.
    static func reportLine(data: [UInt8], address: UInt64, addressType: UInt8, rssi: Int8 = -56) -> String {
        let addressBytes = (0..<6).map { UInt8(truncatingIfNeeded: address >> (8 * $0)) } // HCI: little endian
        let report: [UInt8] = [0x03, addressType] + addressBytes + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        let parameters: [UInt8] = [0x02, 0x01] + report
        let event: [UInt8] = [0x04, 0x3E, UInt8(parameters.count)] + parameters
        return event.map { String(format: "%02X", $0) }.joined(separator: " ") + "\n"
    }

    /// One line into beacond's fifo; false when nobody reads it (beacond is not scanning).
    @discardableResult
    func send(line: String) -> Bool {
        let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        return write(descriptor, bytes, bytes.count) == bytes.count
    }
}

/// A program started in the world: its output (a file) read as it grows.
struct Program: Sendable {
    let pid: pid_t
    let log: String

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
    var lines: [String] { output.split(separator: "\n").map(String.init) }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Its exit status once it ended (bounded).
    func finish() async throws -> Int32 {
        var status: Int32 = 0
        try await until("\(log) to end") { waitpid(pid, &status, WNOHANG) == pid }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

/// A beacon that advertises every 0.2 s while on.
final class Advertiser: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)
    let world: World
    let major: UInt16

    init(_ world: World, major: UInt16 = 1) {
        self.world = world
        self.major = major
    }

    func on() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { [world, major] in
                while !Task.isCancelled {
                    world.advertise(major: major)
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
        }
    }

    func off() async {
        let running = task.withLock { task in
            defer { task = nil }
            return task
        }
        running?.cancel()
        await running?.value
    }
}

/// Waits (bounded) for `condition` to hold; fails naming `what`.
func until(
    _ what: String, timeout: Duration = World.wait, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw World.Failure("waited \(timeout) for \(what)")
}
