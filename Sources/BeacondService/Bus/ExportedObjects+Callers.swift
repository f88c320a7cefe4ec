import BeaconKit
import BeacondAPI
import DBus
import BeacondCore

/// Who is calling, as the bus and the system say: resolved here, before a call reaches the core.
extension ExportedObjects {
    static func callerCredentials(_ daemon: isolated BeaconDaemon, _ sender: String) throws(DBusCallError) -> Caller {
        let peer = try peerCredentials(daemon, sender)
        guard let uid = peer.unixUserID else {
            throw BeacondError(.accessDenied, "the bus did not report who \(sender) is (no UnixUserID), so it cannot act as an app").dbusError
        }
        let name = UnixAccounts.user(uid: uid)?.name ?? "uid \(uid)"
        return Caller(
            credentials: CallerCredentials(
                userName: name, userID: uid,
                executable: peer.processID.flatMap(UnixAccounts.executable)),
            processID: peer.processID)
    }

    /// Admin1's door: who the caller is comes from the bus and the system, whether they may come in is the core's
    /// rule (`AdministratorCandidate.mayAdminister`).
    static func checkAdministrator(_ daemon: isolated BeaconDaemon, _ sender: String) throws(DBusCallError) {
        let peer = try peerCredentials(daemon, sender)
        guard let uid = peer.unixUserID else {
            throw BeacondError(.accessDenied, "the bus did not report who you are (no UnixUserID)").dbusError
        }
        // Root needs no lookup; anyone else's groups are read from the system for each call (membership changes).
        let user = uid == 0 ? nil : UnixAccounts.user(uid: uid)
        let candidate = AdministratorCandidate(
            userID: uid, userName: user?.name, groups: user.map(UnixAccounts.groupNames) ?? [])
        do {
            try daemon.view.checkAdministrator(candidate)
        } catch {
            throw error.dbusError
        }
    }

    /// The bus's word on who `sender` is. The object server asked the bus before it dispatched the call (the
    /// manager object needs caller credentials), without blocking the loop, and keeps the answer per connection.
    static func peerCredentials(_ daemon: isolated BeaconDaemon, _ sender: String) throws(DBusCallError) -> DBusPeerCredentials {
        switch daemon.bus?.server.callerCredentials(of: sender) {
        case .success(let peer)?:
            return peer
        case .failure(let error)?:
            throw BeacondError(
                .accessDenied,
                "the bus could not say who \(sender) is (\(error.name): \(error.message)), "
                    + "so it cannot act as an app or administrator; try again"
            ).dbusError
        case nil:
            throw DBusCallError(name: DBusStandardError.failed, message: "internal error: no credentials were asked for \(sender)")
        }
    }
}
