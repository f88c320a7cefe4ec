import Foundation
import GRDB
import BeacondCore

/// Opening the state database file, telling a corrupt one apart from one that cannot be opened for other reasons,
/// and moving a corrupt one aside. Only corruption leads to a move: a permission problem or a full disk must
/// never cost the administrator's decisions.
extension SQLiteStateDatabase {
    /// Why opening failed, and whether the file's contents are to blame.
    struct OpenFailure: Error {
        var reason: String
        var isCorruption: Bool
    }

    static func open(_ file: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.label = "beacond.state"
        configuration.prepareDatabase { db in
            // WAL: a commit appends to the log instead of rewriting pages, so a crash mid-write leaves the last
            // committed state intact. synchronous = FULL (not WAL's usual NORMAL): with NORMAL the last commits
            // before a power loss may roll back; FULL fsyncs the log at every commit, so a decision the daemon
            // acknowledged (and announced with AuthorizationChanged) survives power loss. Writes are rare
            // (admin decisions and requests), so the fsync costs nothing that matters.
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode == "wal" else {
                throw OpenFailure(
                    reason: "SQLite could not switch the database to WAL mode (it stays \(mode ?? "?"))",
                    isCorruption: false)
            }
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let database: DatabaseQueue
        do {
            database = try DatabaseQueue(path: file, configuration: configuration)
        } catch {
            throw classify(error)
        }
        do {
            // A file with a valid header can still hold damaged pages; quick_check finds them (in time
            // proportional to the file, which holds one row per app).
            let check = try database.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            guard check == ["ok"] else {
                try? database.close()
                throw OpenFailure(
                    reason: "SQLite's integrity check failed: \(check.prefix(3).joined(separator: "; "))",
                    isCorruption: true)
            }
            try SQLiteStateDatabaseSchema.migrator.migrate(database)
        } catch let failure as OpenFailure {
            throw failure
        } catch {
            try? database.close()
            throw classify(error)
        }
        return database
    }

    /// SQLITE_NOTADB (not a database) and SQLITE_CORRUPT are the file's fault; everything else is not.
    private static func classify(_ error: any Error) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        let corrupt = error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
        return corrupt ? OpenFailure(reason: error.message ?? "\(error.resultCode)", isCorruption: true) : error
    }

    /// Renames the database (and its WAL, which belongs to it) to `<file>.corrupt-<UTC timestamp>` and removes
    /// the shared-memory index; returns the new name.
    static func moveAside(_ file: String) throws(StateDatabaseError) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stamp = formatter.string(from: Date())
        let manager = FileManager.default
        var aside = "\(file).corrupt-\(stamp)"
        var attempt = 1
        while manager.fileExists(atPath: aside) {
            attempt += 1
            aside = "\(file).corrupt-\(stamp)-\(attempt)"
        }
        do {
            try manager.moveItem(atPath: file, toPath: aside)
            if manager.fileExists(atPath: file + "-wal") {
                try manager.moveItem(atPath: file + "-wal", toPath: aside + "-wal")
            }
            if manager.fileExists(atPath: file + "-shm") {
                try manager.removeItem(atPath: file + "-shm")
            }
        } catch {
            throw StateDatabaseError(
                file: file,
                message: "the state database is corrupt and cannot be moved aside: "
                    + error.localizedDescription,
                fix: "move or delete it by hand (the daemon then starts with no stored "
                    + "authorizations), and check the state directory is writable")
        }
        return aside
    }

    /// A `StateDatabaseError` for any failure, with SQLite's reason and the usual fixes.
    static func storeError(_ error: any Error, file: String, doing action: String) -> StateDatabaseError {
        let reason: String
        var fix = "check that the file and its directory belong to the daemon's user and that the disk is not full"
        switch error {
        case let failure as OpenFailure:
            reason = failure.reason
        case let error as DatabaseError:
            reason = "SQLite error \(error.resultCode.rawValue): \(error.message ?? "\(error.resultCode)")"
            if error.resultCode == .SQLITE_READONLY {
                fix = "make the state directory and database writable by the daemon's user"
            } else if error.resultCode == .SQLITE_FULL {
                fix = "free disk space on the state directory's file system"
            }
        default:
            reason = "\(error)"
        }
        return StateDatabaseError(file: file, message: "cannot \(action): \(reason)", fix: fix)
    }
}
