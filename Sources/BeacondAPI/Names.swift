/// The D-Bus contract: every name that the daemon, `beaconctl`, tests and client programs share.
/// Names here are fixed; clients depend on them.
public enum BeacondBus {
    public static let name = "org.beacond"
    public static let managerPath = "/org/beacond"
    public static let clientPathPrefix = "/org/beacond/client/"
}

public enum BeacondInterface {
    public static let manager = "org.beacond.Manager1"
    public static let admin = "org.beacond.Admin1"
    public static let locationManager = "org.beacond.LocationManager1"
}

/// Error names (`org.beacond.Error.*`). Every refusal carries one of these and a message with the fix.
public enum BeacondErrorName: String, CaseIterable, Sendable {
    case unknownApp = "org.beacond.Error.UnknownApp"
    case accessDenied = "org.beacond.Error.AccessDenied"
    case missingUsageDescription = "org.beacond.Error.MissingUsageDescription"
    case notAuthorized = "org.beacond.Error.NotAuthorized"
    case locationServicesDisabled = "org.beacond.Error.LocationServicesDisabled"
    case regionLimitExceeded = "org.beacond.Error.RegionLimitExceeded"
    case invalidRegion = "org.beacond.Error.InvalidRegion"
    case unknownRegion = "org.beacond.Error.UnknownRegion"
    case invalidArguments = "org.beacond.Error.InvalidArguments"
}

/// Keys of region, constraint and beacon dictionaries (`a{sv}`).
public enum BeacondKey {
    public static let identifier = "Identifier"
    public static let uuid = "UUID"
    public static let major = "Major"
    public static let minor = "Minor"
    public static let notifyOnEntry = "NotifyOnEntry"
    public static let notifyOnExit = "NotifyOnExit"
    public static let rssi = "RSSI"
    public static let accuracy = "Accuracy"
    public static let proximity = "Proximity"
    public static let txPower = "TxPower"
    public static let timestamp = "Timestamp"
}
