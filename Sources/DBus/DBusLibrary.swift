import CDBus

/// Facts about the libdbus this binary runs against. The connection wrapper lives in
/// this module; it is the only Swift code that calls libdbus.
public enum DBusLibrary {
    /// libdbus's runtime version, e.g. "1.14.10".
    public static var version: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var micro: Int32 = 0
        dbus_get_version(&major, &minor, &micro)
        return "\(major).\(minor).\(micro)"
    }
}
