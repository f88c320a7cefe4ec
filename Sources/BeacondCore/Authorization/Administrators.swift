import BeacondAPI

/// Who may call `Admin1`: root and the members of `admin_group`. The bus adapter says who the caller is (user and
/// groups, from the system); the rule and its refusal live here, where they are tested without a bus.
package struct AdministratorCandidate: Hashable, Sendable {
    package var userID: UInt32
    /// nil when the system knows no user of that id.
    package var userName: String?
    /// Primary and supplementary groups, by name.
    package var groups: Set<String>

    package init(userID: UInt32, userName: String?, groups: Set<String>) {
        self.userID = userID
        self.userName = userName
        self.groups = groups
    }
}

extension AdministratorCandidate {
    /// Lets root and members of `admin_group` (`configuration`'s, in `configDirectory`) in; refuses anyone else with
    /// the fix.
    package func mayAdminister(_ configuration: DaemonConfiguration, configDirectory: String) throws(BeacondError) {
        if userID == 0 { return }
        let group = configuration.adminGroup
        if groups.contains(group) { return }
        let name = userName ?? "uid \(userID)"
        throw BeacondError(
            .accessDenied,
            "\(BeacondInterface.admin) is for root and members of group '\(group)' "
                + "(admin_group in \(configDirectory)/beacond.toml); \(name) (uid \(userID)) is neither. "
                + "Fix: sudo usermod -aG \(group) \(userName ?? "<user>") and log in again, or run the command as root")
    }
}
