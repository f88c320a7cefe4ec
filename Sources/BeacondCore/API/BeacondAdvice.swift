/// The commands beacond's fixes name for itself. beacond cannot be sure how it was started (systemd's unit, a
/// test's private bus, by hand), so each names both ways: a fix that says only `systemctl` is wrong for every
/// beacond not run by systemd.
package enum BeacondAdvice {
    package static let reload = "systemctl reload beacond, or kill -HUP a beacond run by hand"

    /// `pid`: the other beacond's process ID, when known.
    package static func stop(pid: String) -> String {
        pid.isEmpty ? "systemctl stop beacond, or stop the beacond run by hand" : "systemctl stop beacond, or kill \(pid)"
    }
}
