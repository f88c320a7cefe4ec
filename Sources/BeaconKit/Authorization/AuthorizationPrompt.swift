/// How the daemon answers a request from an app whose status is `notDetermined` (and the one
/// WhenInUse→Always upgrade request). iOS asks the user in a prompt; a Linux host has an administrator,
/// so the administrator chooses once, in `prompt` in `/etc/beacond/beacond.toml`.
///
/// Raw values are the configuration values.
public enum AuthorizationPrompt: String, CaseIterable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The request waits until an administrator decides (`beaconctl auth grant|deny`).
    case admin
    /// Every request is refused at once: a first request becomes `denied`, an upgrade keeps WhenInUse.
    case deny
    /// Every request gets WhenInUse at once; an upgrade to Always keeps WhenInUse.
    case whenInUse = "when-in-use"
    /// Every request gets what it asked for at once (never more: a WhenInUse request gets WhenInUse).
    case always

    public var description: String { rawValue }
}
