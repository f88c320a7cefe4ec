import BeaconKit

/// The daemon's behaviour (client sessions, permission configuration, scan control, event routing)
/// is built in the daemon issue on top of `BeaconKit`'s pure engine.
public enum BeacondServiceInfo {
    public static let version = "0.1.0"
}
