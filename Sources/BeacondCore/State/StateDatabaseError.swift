/// The state database cannot be opened, read or written: which file, what went wrong, and what to do about it.
public struct StateDatabaseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database file or state directory concerned (`:memory:` for an in-memory database).
    public var file: String
    /// What went wrong, with SQLite's or the system's reason.
    public var message: String
    /// What an administrator can do about it.
    public var fix: String

    public init(file: String, message: String, fix: String) {
        self.file = file
        self.message = message
        self.fix = fix
    }

    /// `file: message (fix)`.
    public var description: String { "\(file): \(message) (\(fix))" }
}
