import Foundation
import GRDB
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization
public import BeacondCore

/// The database file under a running daemon: deleted with its directory (`rm -rf /var/lib/beacond`), or
/// replaced. SQLite goes on writing to the open, unlinked file, so every commit "succeeds" and a restart finds
/// nothing: a change acknowledged as saved would not be on disk. `fileProblem` notices it (one `stat` against
/// the identity recorded at open); `copy(to:)` writes the open database out to a new file.
extension SQLiteStateDatabase {
    /// The device and inode of the file at `path`, nil if it cannot be read.
    static func fileIdentity(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Why the database open now is no longer the file at `file` (nil while it is, and for an in-memory store).
    public func fileProblem() -> StateDatabaseError? {
        guard let opened = openedFile else { return nil }
        guard let now = Self.fileIdentity(file) else {
            return StateDatabaseError(
                file: file, message: "the state database was deleted while beacond runs (\(String(cString: strerror(errno))))",
                fix: "do not remove the state directory of a running beacond; beacond writes "
                    + "its state to a new database there as soon as it can create the directory")
        }
        guard now == opened else {
            return StateDatabaseError(
                file: file, message: "the state database was replaced by another file while beacond runs",
                fix: "stop beacond before restoring or replacing its state database; beacond goes on "
                    + "with the state it has and writes it to a new database")
        }
        return nil
    }

    /// Writes the whole open database to `path` (which must not exist) in one step (`VACUUM INTO`), so the state
    /// of a database whose file was deleted lives on in a new file.
    public func copy(to path: String) throws(StateDatabaseError) {
        do {
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM INTO ?", arguments: [path])
            }
        } catch {
            throw Self.storeError(error, file: path, doing: "write the state to a new database")
        }
    }
}

/// A file's identity on its file system.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}

/// One daemon per state directory: an exclusive `flock` on `<state directory>/lock`, held for the daemon's
/// life (the kernel drops it when the process ends, `kill -9` included). Two daemons writing one database would
/// each resume the other's regions and deliver queued events twice.
public final class StateDirectoryLock: Sendable {
    /// The lock file's descriptor while the lock is held; nil once released.
    private let descriptor: Mutex<Int32?>
    public let path: String

    /// Takes the lock, or throws saying which process holds it and what to do.
    public init(directory: String) throws(StateDatabaseError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StateDatabaseError(
                file: directory, message: "cannot create the state directory: \(error.localizedDescription)",
                fix: "create it and make it writable by the daemon's user, or pass another --state-dir")
        }
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + "lock"
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw StateDatabaseError(
                file: path, message: "cannot open the lock file: \(String(cString: strerror(errno)))",
                fix: "make the state directory writable by the daemon's user, or pass another --state-dir")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder =
                (try? String(contentsOfFile: path, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(fd)
            throw StateDatabaseError(
                file: directory, message: "another beacond\(holder.isEmpty ? "" : " (pid \(holder))") uses this state directory",
                fix: "stop it first (" + BeacondAdvice.stop(pid: holder) + "), or give this one its own --state-dir")
        }
        descriptor = Mutex(fd)
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { write(fd, $0, strlen($0)) }
    }

    /// Gives the directory up before this object goes: a daemon that has shut down, in a process that goes on
    /// (a test restarting beacond in-process), must not keep the next one out until it is deallocated.
    public func release() {
        descriptor.withLock { fd in
            if let open = fd { close(open) }
            fd = nil
        }
    }

    deinit { release() }
}
