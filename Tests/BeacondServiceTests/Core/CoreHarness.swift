import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Fleet
import Foundation
import Logging

/// A configuration directory and a state directory for a core, removed when the test ends. Two cores made one
/// after the other on the same files are a daemon and the same daemon after a restart.
final class CoreFiles {
    let configuration: ConfigurationDirectory
    var stateDirectory: String { configuration.path + "/state" }

    init(settings: String = CoreHarness.settings, apps: [String: String] = CoreHarness.apps) throws {
        configuration = try ConfigurationDirectory()
        try configuration.write(settings, to: "beacond.toml")
        for (name, text) in apps { try configuration.write(text, to: "apps.d/\(name).toml") }
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
    }

    /// Rewrites beacond.toml and apps.d (for a reload).
    func rewrite(settings: String = CoreHarness.settings, apps: [String: String]) throws {
        try FileManager.default.removeItem(atPath: configuration.path + "/apps.d")
        try configuration.write(settings, to: "beacond.toml")
        for (name, text) in apps { try configuration.write(text, to: "apps.d/\(name).toml") }
    }
}

/// A `DaemonCore` on a real state database file, driven as the daemon's runtime drives it but at times the test chooses:
/// each input is handled at `now`, its effects are collected (`take()` hands them out), `run(to:)` fires the
/// timers the core armed, in order, as the runtime's timer set would, and a `startScanner` is answered at once by a
/// scanner that starts and sees (`scannerAnswers`), as BeaconDaemon's scanner reports back.
final class CoreHarness {
    static let origin = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let door = "org.example.Door"
    static let table = "org.example.Table"
    static let settings = """
        [monitoring]
        exit_timeout = 30
        [background]
        queue_ttl = 60
        activation_interval = 60
        """
    /// An Always app that can be started by the bus, and a WhenInUse-only app.
    static let apps = [
        "door": """
        app_id = "\(door)"
        users = ["alice"]
        always_usage = "Opens the door for you"
        when_in_use_usage = "Shows the door"
        dbus_name = "org.example.Door"
        """,
        "table": """
        app_id = "\(table)"
        users = ["alice"]
        when_in_use_usage = "Shows the table you sit at"
        """,
    ]
    static let alice = Caller(credentials: CallerCredentials(userName: "alice", userID: 1000, executable: "/usr/bin/door"), processID: 42)

    let files: CoreFiles
    var core: DaemonCore
    var now: Timestamp
    /// What the inputs handled since the last `take()` asked for, in order.
    private(set) var effects: [DaemonEffect] = []
    /// Whether `startScanner` is answered by a scanner that starts and reports scanning (the engine is blind until then).
    var scannerAnswers = true

    /// A core on `files`, its authorization and regions loaded from the state directory as the daemon loads them at
    /// start; `database` wraps the real state database file (a double that fails writes).
    init(files: CoreFiles? = nil, at now: Timestamp = CoreHarness.origin, database: ((StateDatabaseFile) -> any StateDatabase)? = nil) throws {
        let files = try files ?? CoreFiles()
        self.files = files
        self.now = now
        let configuration = try files.configuration.load()
        let stateDatabase = try StateDatabaseFile(
            directory: files.stateDirectory, logger: Logger(label: "core-tests", factory: { _ in SwiftLogNoOpLogHandler() }))
        let authorization = AuthorizationService(
            records: try stateDatabase.store.loadAll(), servicesSwitch: try stateDatabase.store.locationServicesSwitch())
        core = DaemonCore(
            configuration: configuration, authorization: authorization, configDirectory: files.configuration.path,
            database: database?(stateDatabase) ?? stateDatabase, now: now)
        effects = try core.restoreRegions(at: now)
    }

    func at(_ seconds: Double) -> Timestamp { Self.origin + .milliseconds(Int64((seconds * 1000).rounded())) }

    // MARK: Inputs

    @discardableResult
    func feed(_ input: DaemonInput) -> DaemonStep {
        let step = core.handle(input, at: now)
        effects += step.effects
        if scannerAnswers, step.effects.contains(where: { if case .startScanner = $0 { true } else { false } }) {
            scannerStarted()
        }
        return step
    }

    @discardableResult
    func call(_ call: DaemonCall) -> Result<CallReply, CallError> {
        feed(.call(call)).reply ?? .failure(.clientClosed(-1))
    }

    /// Hands out the effects collected so far.
    func take() -> [DaemonEffect] {
        defer { effects = [] }
        return effects
    }

    /// Fires every armed timer due by `time`, earliest first, each at its deadline; then the clock stands at `time`.
    func run(to time: Timestamp) {
        while let (timer, deadline) = core.outbox.armedTimers.min(by: { $0.value < $1.value }), deadline <= time {
            now = max(now, deadline)
            feed(.timerFired(timer))
        }
        now = time
    }

    func run(to seconds: Double) { run(to: at(seconds)) }

    // MARK: Story steps

    /// Registers a client of `appID` on `sender`; its number.
    func register(_ appID: String = CoreHarness.door, sender: String = ":1.1") throws -> Int {
        guard case .success(.clientPath(let path)) = call(.registerClient(appID: appID, sender: sender, caller: Self.alice)),
            let number = Int(path.split(separator: "/").last ?? "")
        else { throw HarnessError("RegisterClient(\(appID)) failed") }
        return number
    }

    /// An administrator grants `status` to the app.
    func grant(_ appID: String = CoreHarness.door, _ status: AuthorizationStatus = .authorizedAlways) throws {
        guard case .success = call(.setAuthorization(appID: appID, status: status.rawValue, sender: ":1.99")) else {
            throw HarnessError("SetAuthorization(\(appID), \(status)) failed")
        }
    }

    func monitor(_ client: Int, _ region: BeaconRegion) throws {
        guard case .success = call(.startMonitoring(client: client, .success(region))) else {
            throw HarnessError("StartMonitoring(\(region.identifier)) failed")
        }
    }

    /// This node's scanner started and sees.
    func scannerStarted() {
        feed(.scannerStarted(label: "hci0"))
        feed(.scannerReported(.scanning("hci0 through an HCI socket"), label: "hci0"))
    }

    /// This node's adapter hears the beacon.
    func see(minor: UInt16 = 1) { feed(.scanner(Self.sighting(minor: minor))) }

    /// Sightings every `every` seconds from now to `seconds` (timers fired in between).
    func keepSeeing(until seconds: Double, every: Double = 2, minor: UInt16 = 1) {
        var time = now
        while time <= at(seconds) {
            run(to: time)
            see(minor: minor)
            time = time + .milliseconds(Int64(every * 1000))
        }
        run(to: seconds)
    }

    /// Registers a client of the Door app, authorized Always, monitoring `lobby`.
    func alwaysClientMonitoringLobby(sender: String = ":1.1") throws -> Int {
        let client = try register(sender: sender)
        if core.effectiveStatus(Self.door) != .authorizedAlways { try grant() }
        try monitor(client, try Self.region("lobby"))
        return client
    }

    // MARK: Values

    static func region(_ identifier: String, minor: UInt16? = 1, room: String? = nil) throws -> BeaconRegion {
        try BeaconRegion(identifier: identifier, constraint: BeaconIdentityConstraint(uuid: uuid, major: 1, minor: minor), room: room)
    }

    static func identity(minor: UInt16 = 1) -> BeaconIdentity { BeaconIdentity(uuid: uuid, major: 1, minor: minor) }

    static func sighting(minor: UInt16 = 1) -> ScannerInput {
        .advertisement(
            AdvertisementContent(beacon: BeaconFrame(identity: identity(minor: minor), measuredPower: -59)), rssi: -60,
            address: BluetoothAddress(rawValue: 0xC0FFEE), addressType: 1)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A state database whose writes can be made to fail (a full disk), for the decisions that must be saved first.
final class FailingStateDatabase: StateDatabase {
    let base: StateDatabaseFile
    var failsWrites = false
    static let diskFull = StateDatabaseError(file: "/var/lib/beacond/state.db", message: "database or disk is full", fix: "free space")

    init(_ base: StateDatabaseFile) { self.base = base }

    private func write() throws(StateDatabaseError) { if failsWrites { throw Self.diskFull } }

    var file: String { base.file }
    var isLost: Bool { base.isLost }
    func ensure() throws(StateDatabaseError) { try base.ensure() }
    func save(_ record: AuthorizationRecord, for appID: String) throws(StateDatabaseError) {
        try write()
        try base.save(record, for: appID)
    }
    func saveLocationServicesSwitch(_ enabled: Bool) throws(StateDatabaseError) {
        try write()
        try base.saveLocationServicesSwitch(enabled)
    }
    func apply(_ batch: [StateChange], durability: StateDurability) throws(StateDatabaseError) {
        try write()
        try base.apply(batch, durability: durability)
    }
    func queuedEvents(of appID: String, expiredBefore: Timestamp) throws(StateDatabaseError) -> QueuedEvents {
        try base.queuedEvents(of: appID, expiredBefore: expiredBefore)
    }
    func dropExpiredQueuedEvents(before: Timestamp) throws(StateDatabaseError) -> [String: Int] {
        try base.dropExpiredQueuedEvents(before: before)
    }
    func oldestQueuedEventTime() throws(StateDatabaseError) -> Timestamp? { try base.oldestQueuedEventTime() }
    func queuedEventCounts() throws(StateDatabaseError) -> [String: Int] { try base.queuedEventCounts() }
    func trimRegions(perApp: Int) throws(StateDatabaseError) -> [String: Int] { try base.trimRegions(perApp: perApp) }
    func loadRegions(perApp: Int) throws(StateDatabaseError) -> (regions: [StoredRegion], problems: [String]) {
        try base.loadRegions(perApp: perApp)
    }
    func highestStoredClient() throws(StateDatabaseError) -> Int { try base.highestStoredClient() }
}
