import BeaconKit
import BeacondAPI
import DBus

/// Who is calling, as the bus and the system say: resolved here, before a call reaches the core.
extension DaemonObjects {
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

    static func checkAdministrator(_ daemon: isolated BeaconDaemon, _ sender: String) throws(DBusCallError) {
        let peer = try peerCredentials(daemon, sender)
        guard let uid = peer.unixUserID else {
            throw BeacondError(.accessDenied, "the bus did not report who you are (no UnixUserID)").dbusError
        }
        if uid == 0 { return }
        let group = daemon.core.configuration.adminGroup
        let user = UnixAccounts.user(uid: uid)
        if let user, UnixAccounts.user(user, isMemberOf: group) { return }
        let name = user?.name ?? "uid \(uid)"
        throw BeacondError(
            .accessDenied,
            "\(BeacondInterface.admin) is for root and members of group '\(group)' "
                + "(admin_group in \(daemon.options.configDirectory)/beacond.toml); \(name) (uid \(uid)) is neither. "
                + "Fix: sudo usermod -aG \(group) \(user?.name ?? "<user>") and log in again, or run the command as root"
        ).dbusError
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
