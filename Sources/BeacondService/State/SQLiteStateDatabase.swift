public import BeaconKit
import Foundation
import GRDB
public import BeacondCore

/// Everything the daemon must not forget across restarts and power loss, in `<state directory>/state.sqlite`
/// (`/var/lib/beacond` under systemd's `StateDirectory=beacond`): the administrator's and the apps' authorization
/// decisions, the services switch, every monitored region with its last state, and the region events queued
/// for apps whose client is gone (`SQLiteStateDatabase+Regions`, `SQLiteStateDatabase+Events`).
///
/// Every call is synchronous and runs in its own transaction; use it from one thread (the daemon's state
/// writer). A corrupt database is moved aside at open, and the daemon starts clean with `recoveryNote` set.
public final class SQLiteStateDatabase: Sendable {
    /// The database file's name in the state directory.
    public static let databaseFileName = "state.sqlite"

    let database: DatabaseQueue
    /// The database file, or `:memory:`.
    public let file: String
    /// The file's identity when it was opened (nil in memory), so `fileProblem` can tell it was deleted or replaced.
    let openedFile: FileIdentity?
    /// Set when the database file was unreadable and moved aside at open: what happened and what it means,
    /// for the daemon to log as a warning. Nil on a normal open.
    public let recoveryNote: String?

    /// Creates `directory` if needed, opens `<directory>/state.sqlite` in WAL mode and brings its schema up to
    /// date. A file that is not an SQLite database, or fails SQLite's integrity check, is renamed to
    /// `state.sqlite.corrupt-<UTC timestamp>` and a new database is started (see `recoveryNote`).
    public init(directory: String) throws(StateDatabaseError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StateDatabaseError(
                file: directory,
                message: "cannot create the state directory: "
                    + error.localizedDescription,
                fix: "create it and make it writable by the daemon's user (systemd's "
                    + "StateDirectory=beacond does this), or pass another --state-dir")
        }
        let file =
            directory.hasSuffix("/")
            ? directory + Self.databaseFileName
            : directory + "/" + Self.databaseFileName
        self.file = file
        do {
            database = try Self.open(file)
            recoveryNote = nil
        } catch let failure as OpenFailure where failure.isCorruption {
            let aside = try Self.moveAside(file)
            do {
                database = try Self.open(file)
            } catch {
                throw Self.storeError(error, file: file, doing: "open a new state database")
            }
            recoveryNote =
                "the state database \(file) was unusable (\(failure.reason)); it was moved to "
                + "\(aside) and a new, empty one was started: every app is notDetermined again until it requests "
                + "authorization or an administrator grants it (beaconctl auth grant APP always|when-in-use), and "
                + "monitored regions and queued events of disconnected apps are gone until their apps monitor again"
        } catch {
            throw Self.storeError(error, file: file, doing: "open the state database")
        }
        openedFile = Self.fileIdentity(file)
    }

    private init(database: DatabaseQueue, file: String) {
        self.database = database
        self.file = file
        recoveryNote = nil
        openedFile = nil
    }

    /// A store that lives only as long as the value, for tests.
    public static func inMemory() throws(StateDatabaseError) -> SQLiteStateDatabase {
        do {
            let database = try DatabaseQueue()
            try SQLiteStateDatabaseSchema.migrator.migrate(database)
            return SQLiteStateDatabase(database: database, file: ":memory:")
        } catch {
            throw storeError(error, file: ":memory:", doing: "create an in-memory state database")
        }
    }

    /// Every stored record, by app id. Apps without a row are `notDetermined` (`AuthorizationRecord.initial`).
    public func loadAll() throws(StateDatabaseError) -> [String: AuthorizationRecord] {
        let rows: [Row]
        do {
            rows = try database.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT app_id, status, upgrade_request_used, pending_request FROM app_authorization
                        """)
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "read the stored authorizations")
        }
        var records: [String: AuthorizationRecord] = [:]
        for row in rows {
            let appID: String = row["app_id"]
            let statusText: String = row["status"]
            let pendingText: String? = row["pending_request"]
            // The schema's CHECKs make these unreachable short of a database written by another program.
            guard let status = AuthorizationStatus(rawValue: statusText) else {
                throw StateDatabaseError(
                    file: file, message: "app \(appID) has an unknown status \"\(statusText)\"",
                    fix: "reset the app with beaconctl auth reset \(appID) once the daemon runs, "
                        + "or delete the row with sqlite3")
            }
            let pending = pendingText.flatMap(AuthorizationRequest.init(rawValue:))
            records[appID] = AuthorizationRecord(
                status: status, upgradeRequestUsed: row["upgrade_request_used"],
                pendingRequest: pending)
        }
        return records
    }

    /// Stores `record` for `appID`, replacing what was there, in one transaction. When this returns, the record
    /// is on disk: WAL with `synchronous = FULL` has fsynced the commit.
    public func save(_ record: AuthorizationRecord, for appID: String) throws(StateDatabaseError) {
        do {
            try write(.powerLoss) { db in
                try db.execute(
                    sql: """
                        INSERT INTO app_authorization (app_id, status, upgrade_request_used, pending_request, updated_at)
                        VALUES (?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                        ON CONFLICT (app_id) DO UPDATE SET
                            status = excluded.status,
                            upgrade_request_used = excluded.upgrade_request_used,
                            pending_request = excluded.pending_request,
                            updated_at = excluded.updated_at
                        """,
                    arguments: [
                        appID, record.status.rawValue, record.upgradeRequestUsed,
                        record.pendingRequest?.rawValue,
                    ])
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "save the authorization of \(appID)")
        }
    }

    /// Forgets `appID` (`beaconctl auth reset`): it is `notDetermined` again, with its upgrade request back.
    public func remove(appID: String) throws(StateDatabaseError) {
        do {
            try write(.powerLoss) { db in
                try db.execute(sql: "DELETE FROM app_authorization WHERE app_id = ?", arguments: [appID])
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "remove the authorization of \(appID)")
        }
    }

    /// Closes the connection for good. SQLite checkpoints the write-ahead log into the database file and removes
    /// it, so the file alone holds every commit: what the next beacond, a backup or an administrator's copy reads.
    /// (Left open until the process exits, the log outlives it, and a database file damaged while beacond is
    /// stopped could be masked by the pages the log still holds.) Any use afterwards throws.
    public func close() throws(StateDatabaseError) {
        do {
            try database.close()
        } catch {
            throw Self.storeError(error, file: file, doing: "close the state database")
        }
    }

    /// The connection's journal mode and `synchronous` level, so tests can check the durability settings.
    func durabilitySettings() throws -> (journalMode: String, synchronous: Int) {
        try database.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
            )
        }
    }
}
