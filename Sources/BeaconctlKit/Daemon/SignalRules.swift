import BeacondAPI

/// Match rules `beaconctl` adds. beacond sends client signals and events unicast (to us only), which the
/// bus delivers without a rule; the rules make delivery not depend on that and document what we expect.
public enum SignalRules {
    /// `Admin1.Event` after WatchEvents.
    public static let adminEvents =
        "type='signal',sender='\(BeacondBus.name)',interface='\(BeacondInterface.admin)',"
        + "member='\(BeacondMember.event)',path='\(BeacondBus.managerPath)'"
    /// Every client object's signals (our path is known only after RegisterClient, which already signals).
    public static let locationManager =
        "type='signal',sender='\(BeacondBus.name)',interface='\(BeacondInterface.locationManager)',"
        + "path_namespace='\(BeacondBus.clientPathPrefix.dropLast())'"
    /// beacond leaving the bus (or being replaced).
    public static let daemonOwnerChanged =
        "type='signal',sender='\(DBusDaemon.name)',interface='\(DBusDaemon.name)',"
        + "member='NameOwnerChanged',arg0='\(BeacondBus.name)'"
}

/// The message bus's own name (sender of NameOwnerChanged).
enum DBusDaemon {
    static let name = "org.freedesktop.DBus"
    static let path = "/org/freedesktop/DBus"
}

/// The signal beaconctl sends itself (over a second connection) to wake a blocking receive on
/// SIGINT/SIGTERM: libdbus retries `poll` on EINTR, so a Unix signal alone would not wake it.
/// Internal to beaconctl; not part of beacond's API.
public enum LocalWakeup {
    public static let path = "/org/beacond/beaconctl"
    public static let interface = "org.beacond.beaconctl.Local"
    public static let member = "Interrupted"
}
