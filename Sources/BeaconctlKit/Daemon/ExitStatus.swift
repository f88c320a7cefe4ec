/// `beaconctl`'s exit statuses, chosen from sysexits.h where one fits so scripts can tell "fix the
/// command" from "start the daemon" from "get permission".
public enum ExitStatus {
    public static let success: Int32 = 0
    /// The daemon refused (`org.beacond.Error.*`, or another error reply), or a `doctor` check failed.
    public static let failure: Int32 = 1
    /// EX_USAGE: the command line is wrong (ArgumentParser's validation failures use it too).
    public static let usage: Int32 = 64
    /// EX_UNAVAILABLE: the bus or beacond cannot be reached, or beacond left the bus while we waited.
    public static let unavailable: Int32 = 69
    /// EX_NOPERM: access denied (Admin1 needs root or the admin group).
    public static let noPermission: Int32 = 77

    /// The table printed in `--help`.
    public static let helpText = """
        Exit status:
          0   success; live commands also exit 0 after SIGINT/SIGTERM or --count
          1   beacond refused (org.beacond.Error.*), or a doctor check failed
          64  usage error (unknown command, malformed argument)
          69  the bus or beacond is not reachable, or beacond left the bus
          77  access denied (admin commands need root or the admin group)
        """
}

/// Who may use the admin commands; mirrors the daemon's default `admin_group` for hints.
public enum AdminAccess {
    public static let defaultGroup = "beacond-admin"

    /// What to do when the bus refused Admin1 (beacond's own refusal names its group and file; this cannot: a
    /// non-admin cannot ask beacond for its configuration).
    public static let fix =
        "run as root, or join the admin group: admin_group in beacond.toml of beacond's "
        + "configuration directory (/etc/beacond unless beacond runs with --config-dir), which the D-Bus policy must "
        + "let call Admin1 too (systemd/README.md); for the default, sudo usermod -aG \(defaultGroup) \"$USER\", "
        + "then log in again"

    /// What admin commands say in `--help` about what they need.
    public static let requirement = "Needs root or membership of the admin group (default \(defaultGroup))."
}
