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
    /// RegisterClient beyond the clients one connection, one app or one unix user may have.
    case clientLimitExceeded = "org.beacond.Error.ClientLimitExceeded"
    case invalidRegion = "org.beacond.Error.InvalidRegion"
    case unknownRegion = "org.beacond.Error.UnknownRegion"
    case invalidArguments = "org.beacond.Error.InvalidArguments"
    /// The change took effect but the state database could not be written (disk full, read-only).
    case stateNotSaved = "org.beacond.Error.StateNotSaved"
    /// In `MonitoringDidFail` only: a region of the app with the same identifier replaced this one when the app's
    /// client took over the regions of its disconnected clients.
    case regionReplaced = "org.beacond.Error.RegionReplaced"
}

/// Keys of region, constraint and beacon dictionaries (`a{sv}`).
public enum BeacondKey {
    public static let identifier = "Identifier"
    /// s: the beacon kind, `iBeacon` (the default when absent), `AltBeacon`, `Eddystone` or `PrivateDevice`.
    public static let kind = "Kind"
    /// s: an Eddystone-UID namespace, 20 hex digits.
    public static let namespace = "Namespace"
    /// s: an Eddystone-UID instance, 12 hex digits.
    public static let instance = "Instance"
    /// s: a private device, by the name its Identity Resolving Key was declared under (`[devices]`).
    public static let device = "Device"
    /// q, mV: an Eddystone beacon's battery voltage from its TLM frames.
    public static let batteryMillivolts = "BatteryMillivolts"
    /// d, °C: an Eddystone beacon's temperature from its TLM frames.
    public static let temperature = "Temperature"
    public static let uuid = "UUID"
    public static let major = "Major"
    public static let minor = "Minor"
    public static let notifyOnEntry = "NotifyOnEntry"
    public static let notifyOnExit = "NotifyOnExit"
    /// n, dBm: a sighting at or above it can enter the region (with `absentRSSI`: the region's hysteresis).
    public static let enterRSSI = "EnterRSSI"
    /// n, dBm: a sighting below it does not count at all; between the two it keeps an inside region inside.
    public static let absentRSSI = "AbsentRSSI"
    /// d, seconds: a beacon must be heard, unbroken, this long before the region is entered.
    public static let entryDelay = "EntryDelay"
    /// d, seconds: this region exits after this silence instead of the daemon's exit timeout.
    public static let exitDelay = "ExitDelay"
    public static let rssi = "RSSI"
    public static let accuracy = "Accuracy"
    public static let room = "Room" // s: with [mqtt]: the beacon's room (nearest calibrated
    //    receiver, with hysteresis; "" when it cannot be said);
    //    in a region: inside only while its beacon is there
    public static let receivers = "Receivers" // a{sd}: with [mqtt]: room -> calibrated, smoothed metres
    //    from each receiver's fresh readings, this one included
    public static let receiver = "Receiver" // s: with [mqtt]: the receiver (by room) whose reading gave
    //    RSSI and Accuracy: this node's room when its adapter
    //    heard the beacon this cycle, else the nearest receiver;
    //    "" when nobody heard it this cycle
    public static let position = "Position" // a{sv}: with [mqtt] and a floor plan: where the beacon
    //    is on it (BeacondPositionKey); absent before any plan
    //    receiver heard it
    public static let proximity = "Proximity"
    public static let txPower = "TxPower"
    public static let timestamp = "Timestamp"
}

/// Keys of a ranged beacon's `Position` (docs/position.md).
public enum BeacondPositionKey {
    /// d, metres on the floor plan.
    public static let x = "X", y = "Y", z = "Z"
    /// s: the floor's id in floorplan.toml.
    public static let floor = "Floor"
    /// d, metres: the true position is within this of (X, Y) about two times in three.
    public static let accuracy = "Accuracy"
    /// n (uint32): how many receivers' readings placed it.
    public static let fixes = "Fixes"
}

/// Keys of `GetFloorPlan`'s reply and its entries (floorplan.toml's, docs/position.md).
public enum BeacondFloorPlanKey {
    /// aa{sv} each: `Id` s, `Name` s, `Heights` ad (bottom, top; absent for a one-floor plan's only floor), `TagHeight`
    /// d (metres above the floor), `Bounds` ad (minimum x, y, maximum x, y: where the locator searches).
    public static let floors = "Floors"
    /// aa{sv} each: `Id` s, `Name` s, `Floor` s, `Points` ad (x0, y0, x1, y1, …).
    public static let rooms = "Rooms"
    /// aa{sv} each: `Id` s, `Floor` s, `X` d, `Y` d, `Z` d, and `RSSIOffset` d, `PathLossExponent` d when the plan
    /// calibrates it.
    public static let receivers = "Receivers"
    public static let id = "Id", name = "Name", heights = "Heights", tagHeight = "TagHeight", bounds = "Bounds"
    public static let floor = "Floor", points = "Points", x = "X", y = "Y", z = "Z"
    public static let rssiOffset = "RSSIOffset", pathLossExponent = "PathLossExponent"
}

/// Keys of `ListReceiverReadings` entries: each receiver's latest raw reading of each beacon (for calibration).
public enum BeacondReadingKey {
    public static let uuid = "UUID", major = "Major", minor = "Minor"
    /// s: the receiver, by its room.
    public static let receiver = "Receiver"
    /// d, dBm: as the receiver reported it, before calibration (smoothed by ESPresense and beacond nodes).
    public static let rssi = "RSSI"
    /// n, dBm: the RSSI at one metre used (the beacon's override in calibration.toml, or what it advertises).
    public static let measuredPower = "MeasuredPower"
    /// t: when, µs since the epoch.
    public static let timestamp = "Timestamp"
}

/// Keys of `ListReceiverHearings` entries: each receiver's latest reading of each other receiver it hears (an
/// ESPresense node's `node:` readings), for calibration against the floor plan's distances.
public enum BeacondHearingKey {
    /// s: the receiver that heard, by its id on the broker (its room slug).
    public static let receiver = "Receiver"
    /// s: the receiver it heard, by its id on the broker.
    public static let heard = "Heard"
    /// d, dBm: as the receiver reports it, before calibration.
    public static let rssi = "RSSI"
    /// n, dBm: the RSSI at one metre the heard receiver advertises (−59 when it does not say).
    public static let measuredPower = "MeasuredPower"
    /// t: when, µs since the epoch.
    public static let timestamp = "Timestamp"
}

/// Authorization status strings (Core Location's names).
public enum BeacondStatus {
    public static let all = ["notDetermined", "restricted", "denied", "authorizedWhenInUse", "authorizedAlways"]
}

/// Keys of `Admin1.GetStatus() → a{sv}`.
public enum BeacondStatusKey {
    public static let version = "Version" // s
    public static let locationServicesEnabled = "LocationServicesEnabled" // b
    public static let scanning = "Scanning" // b: the scanner is running now
    public static let scanner = "Scanner" // s: the configured source, e.g. "fifo:/run/x"
    /// s: "idle", "starting", "scanning", "waiting: <reason>" or "failed: <reason>" (`BeacondScannerState`).
    public static let scannerState = "ScannerState"
    public static let scannerDetail = "ScannerDetail" // s: the scanner in use and what it reads ("" when idle),
    //    e.g. "hci (auto: CAP_NET_RAW present): hci0 (…): every advertising report …"
    public static let adapters = "Adapters" // aa{sv}: Name s, Address s, Powered b (BlueZ scanners)
    public static let prompt = "Prompt" // s: admin|deny|when-in-use|always
    // Counts, never lists: GetStatus's size does not grow with what clients did. The lists are paged (List*).
    public static let clientCount = "ClientCount" // u: every client, connected or detached
    public static let connectedClientCount = "ConnectedClientCount" // u: clients with a connection
    public static let regionCount = "RegionCount" // u: monitored regions of every app
    public static let pendingRequestCount = "PendingRequestCount" // u
    public static let appCount = "AppCount" // u: declared apps
    public static let queuedEventCount = "QueuedEventCount" // u: region events waiting for apps' next clients
    public static let limits = "Limits" // a{sv}: BeacondLimitKey, the bounds in force
    public static let configDirectory = "ConfigDirectory" // s
    public static let stateDirectory = "StateDirectory" // s
    public static let stateError = "StateError" // s: "" or why the state database cannot be written now
    public static let warnings = "Warnings" // as: configuration warnings in force
    public static let configurationError = "ConfigurationError" // s: "" or why the files on disk were rejected at the
    //    last reload (file:line: problem); the previous
    //    configuration stays in force
    public static let locationServicesConfigured = "LocationServicesConfigured" // b: location_services in beacond.toml
    public static let locationServicesSwitch = "LocationServicesSwitch" // b: the administrator's switch (beaconctl services)
    public static let startedAt = "StartedAt" // t: µs since the Unix epoch
    public static let mqttBroker = "MQTTBroker" // s: "" when [mqtt] is off, else mqtt[s]://host:port
    public static let mqttState = "MQTTState" // s: "off", "connecting", "connected" or "waiting"
    public static let mqttDetail = "MQTTDetail" // s: why it is waiting (the broker's or the system's words)
    public static let mqttRoom = "MQTTRoom" // s: this receiver's room as topics carry it
    public static let mqttReadingsPublished = "MQTTReadingsPublished" // t: readings published since start
    public static let mqttReadingsNotSent = "MQTTReadingsNotSent" // t: readings due while not connected (not kept)
    public static let mqttRefused = "MQTTRefused" // s: "" or the last publication the broker refused:
    //    "topic: reason" (MQTT 5; e.g. an ACL)
    /// u: the other receivers heard of (each in `Admin1.ListReceivers`, paged: up to 1,000 would make a large status).
    public static let mqttReceiverCount = "MQTTReceiverCount"
    public static let mqttReceiversOnline = "MQTTReceiversOnline" // u: how many of them are online
    public static let mqttReadingsDropped = "MQTTReadingsDropped" // t: messages of other receivers that were unusable
    public static let mqttLastDropped = "MQTTLastDropped" // s: "" or why the last one was (topic: reason)
    /// t: receivers evicted from the full table (1,000) to make room for new rooms: offline or silent longest first.
    public static let mqttReceiversEvicted = "MQTTReceiversEvicted"
}

/// Keys of the entries of `Admin1.ListReceivers`: the other receivers on the broker.
public enum BeacondReceiverKey {
    public static let room = "Room" // s: as its topics carry it
    public static let online = "Online" // b: its status is online (or it published since)
    public static let lastReading = "LastReading" // t: µs since the epoch, 0 = none yet
    public static let readings = "Readings" // t: readings taken from it
}

/// Keys of `GetStatus()["Limits"]`: the bounds in force (beacond.toml, docs/dbus-api.md "Bounds").
public enum BeacondLimitKey {
    public static let maxRegionsPerClient = "MaxRegionsPerClient" // u
    public static let maxRegionsPerApp = "MaxRegionsPerApp" // u
    public static let maxClientsPerApp = "MaxClientsPerApp" // u: connected clients
    public static let maxClientsPerUser = "MaxClientsPerUser" // u: connected clients, whatever their app
    public static let maxClientsPerConnection = "MaxClientsPerConnection" // u
    public static let maxPageSize = "MaxPageSize" // u: the most entries one List* reply carries
}

/// Keys of `ListClients(offset, limit) → (aa{sv}, total)` entries.
public enum BeacondClientKey {
    public static let path = "Path" // o
    public static let appID = "AppId" // s
    public static let sender = "Sender" // s: unique bus name, "" once disconnected
    public static let unixUserID = "UnixUserID" // u
    public static let processID = "ProcessID" // u
    public static let authorizationStatus = "AuthorizationStatus" // s
    public static let inUse = "InUse" // b
    public static let connected = "Connected" // b
    public static let monitoredRegions = "MonitoredRegions" // u: count
    public static let rangedConstraints = "RangedConstraints" // u: count
}

/// Keys of `ListRegions(offset, limit) → (aa{sv}, total)` entries (a region dictionary plus these).
public enum BeacondRegionStatusKey {
    public static let appID = "AppId" // s
    public static let client = "Client" // o
    public static let state = "State" // s: unknown|inside|outside
    public static let lastSeen = "LastSeen" // t: µs since the epoch, 0 = never
}

/// Keys of `ListPendingRequests(offset, limit) → (aa{sv}, total)` entries.
public enum BeacondPendingRequestKey {
    public static let appID = "AppId" // s
    public static let request = "Request" // s: "whenInUse" | "always"
    public static let currentStatus = "AuthorizationStatus" // s
    public static let usageDescription = "UsageDescription" // s: what the app declared for this request
}

/// Keys of `ListApps(offset, limit) → (aa{sv}, total)` entries (every declared app, for `beaconctl auth list`).
public enum BeacondAppKey {
    public static let appID = "AppId" // s
    public static let authorizationStatus = "AuthorizationStatus" // s: the stored status (restricted while services are off is not shown here)
    public static let pendingRequest = "PendingRequest" // s: "" | "whenInUse" | "always"
    public static let declarationFile = "DeclarationFile" // s
    public static let users = "Users" // as
    public static let queuedEvents = "QueuedEvents" // u: region events waiting for the app's next client
    public static let monitoredRegions = "MonitoredRegions" // u: the app's regions, all its clients together
    public static let connectedClients = "ConnectedClients" // u
}

/// `Admin1.Event(s kind, a{sv} data)` kinds. Data always has `AppId` and `Client` (o) when about a client.
public enum BeacondEventKind {
    public static let clientRegistered = "ClientRegistered"
    public static let clientClosed = "ClientClosed"
    public static let authorizationRequested = "AuthorizationRequested" // data: Request s, Disposition s
    public static let authorizationChanged = "AuthorizationChanged" // data: Status s
    public static let didStartMonitoring = "DidStartMonitoring" // data: Region a{sv}
    public static let didDetermineState = "DidDetermineState" // data: State s, Region a{sv}
    public static let didEnterRegion = "DidEnterRegion" // data: Region a{sv}
    public static let didExitRegion = "DidExitRegion" // data: Region a{sv}
    public static let didRangeBeacons = "DidRangeBeacons" // data: Beacons aa{sv}, Constraint a{sv}
    public static let monitoringDidFail = "MonitoringDidFail" // data: Region a{sv}, Error s, Message s
    public static let rangingDidFail = "RangingDidFail" // data: Constraint a{sv}, Error s, Message s
    public static let locationServicesChanged = "LocationServicesChanged" // data: Enabled b
    public static let scanningChanged = "ScanningChanged" // data: Scanning b
    public static let configurationReloaded = "ConfigurationReloaded" // data: Warnings as
    public static let configurationRejected = "ConfigurationRejected" // data: Error s (old config stays)
}

/// Keys of the event dictionary (`a{sv}`) after the region in `DidEnterRegion`, `DidExitRegion` and
/// `DidDetermineState`.
public enum BeacondEventInfoKey {
    /// t: when it happened, µs since the Unix epoch (for a late event: when it happened, not when it arrived).
    public static let timestamp = "Timestamp"
    /// b: true when the event waited in the app's queue while the app had no client.
    public static let late = "Late"
    /// u: on the first late event only, and only if some were lost: events dropped before it (queue full or
    /// older than queue_ttl).
    public static let droppedBefore = "DroppedBefore"
}

/// Keys of `Event` data dictionaries.
public enum BeacondEventKey {
    public static let appID = "AppId", client = "Client", status = "Status", request = "Request"
    public static let disposition = "Disposition", region = "Region", state = "State", beacons = "Beacons"
    public static let constraint = "Constraint", error = "Error", message = "Message", enabled = "Enabled"
    public static let scanning = "Scanning", warnings = "Warnings", timestamp = "Timestamp"
}

/// Member names of the interfaces (methods, properties, signals).
public enum BeacondMember {
    // Manager1
    public static let registerClient = "RegisterClient"
    public static let version = "Version", locationServicesEnabled = "LocationServicesEnabled", scanning = "Scanning"
    /// s: `BeacondScannerState`'s values; a failed scanner stays "failed: …" while it is retried, until it scans.
    public static let scannerState = "ScannerState"
    // Admin1
    public static let getStatus = "GetStatus", listClients = "ListClients", listPendingRequests = "ListPendingRequests"
    public static let listRegions = "ListRegions", listApps = "ListApps"
    public static let setAuthorization = "SetAuthorization", resetAuthorization = "ResetAuthorization"
    public static let setLocationServicesEnabled = "SetLocationServicesEnabled"
    public static let watchEvents = "WatchEvents", unwatchEvents = "UnwatchEvents", event = "Event"
    public static let listReceiverReadings = "ListReceiverReadings", listReceivers = "ListReceivers", reload = "Reload"
    /// `ListReceiverHearings(u offset, u limit) → (aa{sv}, u)`: what receivers last heard of each other
    /// (`BeacondHearingKey`), for `beaconctl calibrate --receivers`.
    public static let listReceiverHearings = "ListReceiverHearings"
    /// `GetFloorPlan() → a{sv}`: the floor plan in force (`BeacondFloorPlanKey`); empty without one.
    public static let getFloorPlan = "GetFloorPlan"
    // LocationManager1
    public static let requestWhenInUseAuthorization = "RequestWhenInUseAuthorization"
    public static let requestAlwaysAuthorization = "RequestAlwaysAuthorization"
    public static let startMonitoring = "StartMonitoring", stopMonitoring = "StopMonitoring", requestState = "RequestState"
    public static let startRanging = "StartRanging", stopRanging = "StopRanging", setInUse = "SetInUse", close = "Close"
    public static let appID = "AppId", authorizationStatus = "AuthorizationStatus", inUse = "InUse"
    public static let monitoredRegions = "MonitoredRegions", rangedConstraints = "RangedConstraints"
    public static let authorizationChanged = "AuthorizationChanged", didStartMonitoring = "DidStartMonitoring"
    public static let didDetermineState = "DidDetermineState", didEnterRegion = "DidEnterRegion"
    public static let didExitRegion = "DidExitRegion", didRangeBeacons = "DidRangeBeacons"
    public static let monitoringDidFail = "MonitoringDidFail", rangingDidFail = "RangingDidFail"
}

// MARK: Names beaconctl reads

extension BeacondStatus {
    public static let notDetermined = "notDetermined", restricted = "restricted", denied = "denied"
    public static let authorizedWhenInUse = "authorizedWhenInUse", authorizedAlways = "authorizedAlways"
}

/// Keys of the adapter entries in `GetStatus()["Adapters"]`.
public enum BeacondAdapterKey {
    public static let name = "Name" // s: hci0
    public static let address = "Address" // s: 00:1A:7D:DA:71:13
    public static let powered = "Powered" // b
}

/// Values of `Request` (pending requests, `AuthorizationRequested` events) and of an app's `PendingRequest`.
public enum BeacondRequestKind {
    public static let whenInUse = "whenInUse", always = "always"
}

/// Values of `GetStatus()["ScannerState"]`.
public enum BeacondScannerState {
    public static let idle = "idle", starting = "starting", scanning = "scanning"
    /// Followed by the reason, e.g. "failed: no adapter hci0".
    public static let failedPrefix = "failed: "
    /// Followed by the reason: the scanner cannot see now and recovers by itself (bluetoothd restarting, the
    /// adapter powered off or removed); regions are unknown meanwhile.
    public static let waitingPrefix = "waiting: "
}
