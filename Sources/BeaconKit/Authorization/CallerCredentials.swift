/// Who is on the other end of a client connection, as the bus reports it
/// (`org.freedesktop.DBus.GetConnectionCredentials`: UnixUserID, ProcessID), resolved by the
/// daemon to a user name and the process's executable path.
public struct CallerCredentials: Hashable, Sendable {
    public var userName: String
    public var userID: UInt32
    /// `/proc/PID/exe` of the caller; nil when it could not be read (the process is gone, or
    /// the bus gave no process ID).
    public var executable: String?

    public init(userName: String, userID: UInt32, executable: String?) {
        self.userName = userName
        self.userID = userID
        self.executable = executable
    }
}

extension AuthorizationRules {
    /// Whether `caller` may register as `app` (docs/authorization.md: the daemon checks the caller's
    /// credentials against the declaration). The user must be listed in `users`; when the app
    /// declares an `executable`, the caller must be running exactly it. Root is not exempt: an
    /// administrator acts through Admin1, not by posing as an app.
    public static func checkCaller(_ caller: CallerCredentials, app: AppDeclaration) throws(AuthorizationError) {
        guard app.users.contains(caller.userName) else {
            // The app's other users are not the caller's business: only whether it is listed.
            throw AuthorizationError(
                kind: .callerNotPermitted, appID: app.appID,
                message: "user \(caller.userName) (uid \(caller.userID)) may not act as app \(app.appID): "
                    + "it is not in users of \(app.declarationFile). "
                    + "Fix: add \"\(caller.userName)\" to users = [...] in \(app.declarationFile) and reload "
                    + "beacond (\(AuthorizationMessages.reloadCommand)), or run the client as a listed user.")
        }
        if let required = app.executable, caller.executable != required {
            let actual = caller.executable.map { "runs \($0)" } ?? "its executable could not be determined"
            throw AuthorizationError(
                kind: .callerNotPermitted, appID: app.appID,
                message: "this process \(actual), but app \(app.appID) may only be used by \(required) "
                    + "(executable in \(app.declarationFile)). Fix: start the client from \(required), "
                    + "or change executable in \(app.declarationFile) and reload beacond (\(AuthorizationMessages.reloadCommand)).")
        }
    }
}
