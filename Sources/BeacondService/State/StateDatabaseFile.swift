import BeaconKit
import Foundation
import Logging
import MainLoopKit
import BeacondCore

/// The state directory as the daemon holds it: its lock (one beacond per directory), the open database, and the
/// watch that notices the file being deleted or moved. Every write that a client or administrator is told of
/// (the journal's commits, authorization decisions, the services switch) goes through `ensured()`, which checks
/// that the open database is still the file on disk: SQLite goes on writing to a deleted file as if nothing
/// happened, so without this a change would be acknowledged as saved and gone at the next restart. (Dropping
/// expired queued events and trimming at start write to `store` directly: redone after a restart if lost.) A deleted database is
/// written out to a new file (with the directory and its lock made again), so nothing is lost; one that cannot
/// be (the directory cannot be made) or that was replaced by another file is an error like a full disk.
final class StateDatabaseFile {
    let directory: String
    private(set) var store: SQLiteStateDatabase
    private var lock: StateDirectoryLock
    private var watch: StateDirectoryWatch?
    /// Where and what the watch calls, kept to watch again after the database is written anew.
    private var watchLoop: MainLoop?
    private var watchChanged: (() -> Void)?
    /// Set while the database file is gone or replaced and could not be written anew.
    private(set) var isLost = false
    /// Set once `close` has run: the database is closed and the directory given up.
    private(set) var isClosed = false
    private let logger: Logger

    init(directory: String, logger: Logger) throws(StateDatabaseError) {
        self.directory = directory
        self.logger = logger
        lock = try StateDirectoryLock(directory: directory)
        store = try SQLiteStateDatabase(directory: directory)
    }

    var file: String { store.file }

    /// The store, once its file is checked (and written anew if it was deleted).
    func ensured() throws(StateDatabaseError) -> SQLiteStateDatabase {
        guard !isClosed else {
            throw StateDatabaseError(
                file: store.file, message: "the state database is closed: beacond is stopping",
                fix: "start beacond again; what it saved before it stopped is in the database")
        }
        guard let problem = store.fileProblem() else {
            isLost = false
            return store
        }
        isLost = true
        guard !FileManager.default.fileExists(atPath: store.file) else { throw problem }
        logger.error(
            "\(problem.message); writing the state beacond holds to a new database",
            metadata: ["state.file": "\(store.file)"])
        do {
            let lock = try StateDirectoryLock(directory: directory)
            try store.copy(to: store.file)
            store = try SQLiteStateDatabase(directory: directory)
            self.lock = lock
        } catch {
            throw StateDatabaseError(
                file: store.file, message: "\(problem.message), and a new one cannot be written: \(error.message)",
                fix: error.fix)
        }
        rewatch()
        isLost = false
        logger.notice("the state is saved again, in a new \(store.file)")
        return store
    }

    /// Saves an authorization decision, for `AuthorizationService` (which applies it only once saved).
    func save(_ record: AuthorizationRecord, for appID: String) throws(StateDatabaseError) {
        try ensured().save(record, for: appID)
    }

    func saveLocationServicesSwitch(_ enabled: Bool) throws(StateDatabaseError) {
        try ensured().saveLocationServicesSwitch(enabled)
    }

    /// Writes a journal batch (`StateJournal`).
    func apply(_ batch: [StateChange], durability: StateDurability) throws(StateDatabaseError) {
        try ensured().apply(batch, durability: durability)
    }

    /// Runs `changed` on the loop as soon as something in the state directory is deleted or moved, so a lost
    /// database is recovered or reported at once, not at the next change.
    func watch(on loop: MainLoop, changed: @escaping () -> Void) {
        watchLoop = loop
        watchChanged = changed
        rewatch()
    }

    private func rewatch() {
        watch?.stop()
        guard let watchLoop, let watchChanged else { return }
        watch = StateDirectoryWatch(directory: directory, loop: watchLoop, changed: watchChanged)
    }

    /// The last write is done: the watch stops, the database is closed (its write-ahead log folded into the file),
    /// and only then is the lock released, so the next beacond never opens a database this one still holds.
    /// Idempotent. Throws when SQLite cannot close the database; the lock is released all the same.
    func close() throws(StateDatabaseError) {
        guard !isClosed else { return }
        isClosed = true
        watch?.stop()
        watch = nil
        watchChanged = nil
        defer { lock.release() }
        try store.close()
    }
}

/// The core's port to the state database: writes the core must wait for go through `ensured()` (the file is checked first); reads,
/// dropping expired queued events and the start trim use the open database as it is.
extension StateDatabaseFile: StateDatabase {
    func ensure() throws(StateDatabaseError) { _ = try ensured() }
    func queuedEvents(of appID: String, expiredBefore: Timestamp) throws(StateDatabaseError) -> QueuedEvents {
        try store.queuedEvents(of: appID, expiredBefore: expiredBefore)
    }
    func dropExpiredQueuedEvents(before: Timestamp) throws(StateDatabaseError) -> [String: Int] {
        try store.dropExpiredQueuedEvents(before: before)
    }
    func oldestQueuedEventTime() throws(StateDatabaseError) -> Timestamp? { try store.oldestQueuedEventTime() }
    func queuedEventCounts() throws(StateDatabaseError) -> [String: Int] { try store.queuedEventCounts() }
    func trimRegions(perApp: Int) throws(StateDatabaseError) -> [String: Int] { try store.trimRegions(perApp: perApp) }
    func loadRegions(perApp: Int) throws(StateDatabaseError) -> (regions: [StoredRegion], problems: [String]) {
        try store.loadRegions(perApp: perApp)
    }
    func highestStoredClient() throws(StateDatabaseError) -> Int { try store.highestStoredClient() }
}
