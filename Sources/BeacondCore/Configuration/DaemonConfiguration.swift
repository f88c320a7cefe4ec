public import BeaconKit
public import struct Foundation.UUID

/// Everything the daemon reads from its configuration directory (`/etc/beacond`): `beacond.toml` and
/// `apps.d/*.toml`. Built by `ConfigurationLoader`; `defaults` is what an absent `beacond.toml` means, and the
/// shipped `config/beacond.toml` spells out exactly these values (a test keeps the two equal).
public struct DaemonConfiguration: Hashable, Sendable {
    /// `[authorization] location_services`: Core Location's global switch; off makes every app restricted.
    public var locationServicesEnabled: Bool
    /// `[authorization] prompt`: how requests from undetermined apps are answered.
    public var prompt: AuthorizationPrompt
    /// `[authorization] admin_group`: members (and root) may call `org.beacond.Admin1`.
    public var adminGroup: String
    /// `[monitoring] exit_timeout`: silence after which an inside region becomes outside.
    public var exitTimeout: Duration
    /// `[monitoring] enter_rssi`, `absent_rssi`: the RSSI hysteresis of regions that bring none (nil: every
    /// sighting counts).
    public var hysteresis: RSSIHysteresis?
    /// `[monitoring] exit_timeout_min`: with a value above 0, adaptive exits: each beacon exits after a silence learned
    /// from its own rhythm, between this and `exitTimeout`. nil (0): every beacon waits `exitTimeout`.
    public var exitTimeoutMinimum: Duration?
    /// `[monitoring] exit_chance`: with adaptive exits, the chance per hour that a present beacon is wrongly exited.
    public var exitChance: Double
    /// `[rooms] margin`, `dwell`: what a room must beat, and for how long, to take a beacon.
    public var rooms: RoomConfiguration
    /// `calibration.toml [receivers.<room>]`: each receiver's RSSI offset and path-loss exponent.
    public var calibrations: [String: ReceiverCalibration]
    /// `floorplan.toml` (or the file `[rooms] floorplan` names): floors, rooms and receivers' places. With one, rooms
    /// come from beacons' positions; nil: a receiver names its room.
    public var floorPlan: FloorPlan?
    /// `[rooms] floorplan` as written (relative to the configuration directory); nil: `floorplan.toml` there, if any.
    public var floorPlanSetting: String?
    /// `calibration.toml [beacons]`: measured power overrides, dBm at one metre.
    public var measuredPowerOverrides: [BeaconIdentity: Int]
    /// `[monitoring] max_regions_per_client`: the region that would exceed it is refused.
    public var maxRegionsPerClient: Int
    /// `[monitoring] max_regions_per_app`: regions of one app, all its clients (connected or not) together.
    public var maxRegionsPerApp: Int
    /// `[clients] max_clients_per_app`: connected clients of one app.
    public var maxClientsPerApp: Int
    /// `[clients] max_clients_per_user`: connected clients one unix user registered, whatever their apps.
    public var maxClientsPerUser: Int
    /// `[background] queue_limit`: region events kept per app while it has no client (the oldest dropped).
    public var queueLimit: Int
    /// `[background] queue_ttl`: how long a queued event stays deliverable.
    public var queueTTL: Duration
    /// `[background] activation_interval`: the least time between two starts of one app's `dbus_name`.
    public var activationInterval: Duration
    /// `[scanner] source`: where advertisements come from.
    public var scanner: ScannerSpec
    /// `[mqtt]`: this node on an MQTT broker (off unless `broker` is set).
    public var mqtt: MQTTSettings
    /// The declared apps, by app id.
    public var apps: [String: AppConfiguration]
    /// The administrator's private devices (`devices.d/*.toml`), by name: every app may name them.
    public var devices: [String: IdentityResolvingKey] = [:]
    /// Unknown sections and keys: logged at start and on reload, never fatal.
    public var warnings: [ConfigurationDiagnostic]
    /// The `beacond.toml` these values came from (or would have, when it is absent), named in messages.
    public var configFile: String

    public init(
        locationServicesEnabled: Bool = true, prompt: AuthorizationPrompt = .admin,
        adminGroup: String = "beacond-admin", exitTimeout: Duration = .seconds(30),
        hysteresis: RSSIHysteresis? = nil, maxRegionsPerClient: Int = 20, queueLimit: Int = 1000, queueTTL: Duration = .seconds(86_400),
        activationInterval: Duration = .seconds(60), scanner: ScannerSpec = .auto, mqtt: MQTTSettings = .defaults,
        apps: [String: AppConfiguration] = [:], warnings: [ConfigurationDiagnostic] = [],
        configFile: String = AuthorizationPolicy.defaultConfigFile
    ) {
        self.locationServicesEnabled = locationServicesEnabled
        self.prompt = prompt
        self.adminGroup = adminGroup
        self.exitTimeout = exitTimeout
        self.hysteresis = hysteresis
        self.exitTimeoutMinimum = nil
        self.exitChance = 1e-3
        self.rooms = .default
        self.calibrations = [:]
        self.floorPlan = nil
        self.floorPlanSetting = nil
        self.measuredPowerOverrides = [:]
        self.maxRegionsPerClient = maxRegionsPerClient
        self.maxRegionsPerApp = 100
        self.maxClientsPerApp = 64
        self.maxClientsPerUser = 64
        self.queueLimit = queueLimit
        self.queueTTL = queueTTL
        self.activationInterval = activationInterval
        self.scanner = scanner
        self.mqtt = mqtt
        self.apps = apps
        self.warnings = warnings
        self.configFile = configFile
    }

    /// The defaults of every key (as config/beacond.toml lists them), no apps, no warnings.
    public static let defaults = DaemonConfiguration()

    /// The authorization rules' view of these settings.
    public var policy: AuthorizationPolicy {
        AuthorizationPolicy(locationServicesEnabled: locationServicesEnabled, prompt: prompt, configFile: configFile)
    }

    /// The region monitor's settings. `exitTimeout` was range-checked when it was loaded, so this fails only for
    /// a configuration assembled by hand with an out-of-range value.
    public func monitoringConfiguration() throws(MonitoringConfigurationError) -> MonitoringConfiguration {
        try MonitoringConfiguration(
            exitTimeout: exitTimeout, hysteresis: hysteresis,
            adaptiveExit: try exitTimeoutMinimum.map { minimum throws(MonitoringConfigurationError) in
                try AdaptiveExit(minimum: minimum, chance: exitChance)
            })
    }

    /// The declaration of `appID`, the input `AuthorizationRules` needs.
    public func declaration(of appID: String) -> AppDeclaration? { apps[appID]?.declaration }
}

/// Private devices by name, the one place names meet keys: an app's own `[devices]` come before the
/// administrator's devices.d, and the administrator's files (calibration.toml, `[mqtt] publish`) see only theirs.
extension DaemonConfiguration {
    /// The key `name` has for `app` now (the app's own device of that name first, else the administrator's); with
    /// no app, the administrator's.
    public func deviceKey(_ name: String, for app: AppConfiguration? = nil) -> IdentityResolvingKey? {
        app?.devices[name] ?? devices[name]
    }

    /// A `device:NAME` constraint with the fingerprint of the key NAME has for `app`; nil when it has none. Other
    /// kinds pass unchanged.
    public func resolvingDevice(_ constraint: BeaconIdentityConstraint, for app: AppConfiguration? = nil) -> BeaconIdentityConstraint? {
        guard constraint.kind == .privateDevice, let name = constraint.deviceName else { return constraint }
        return deviceKey(name, for: app).map { constraint.resolvingDevice(fingerprint: $0.fingerprint) }
    }

    /// A private device's name by its key's fingerprint, for the administrator: the administrator's name first,
    /// else the first app's (by app id) that declared the key; of two names for one key, the first by name.
    public var deviceNamesByFingerprint: [UUID: String] {
        var names: [UUID: String] = [:]
        for appID in apps.keys.sorted().reversed() {
            for (name, key) in apps[appID]!.devices.sorted(by: { $0.key > $1.key }) { names[key.fingerprint] = name }
        }
        for (name, key) in devices.sorted(by: { $0.key > $1.key }) { names[key.fingerprint] = name }
        return names
    }
}

extension DaemonConfiguration {
    /// Every declared private device's key: the administrator's and every app's (an app sees only its own and the
    /// administrator's by name, but one resolver serves all).
    package var privateDeviceKeys: [IdentityResolvingKey] {
        var keys = devices.sorted { $0.key < $1.key }.map(\.value)
        for appID in apps.keys.sorted() {
            keys += apps[appID]!.devices.sorted { $0.key < $1.key }.map(\.value)
        }
        return keys
    }

    /// The region monitor's settings in force. The loader already checked exit_timeout > 0; the fallback is only for
    /// a value that slipped through.
    package var monitoring: MonitoringConfiguration { (try? monitoringConfiguration()) ?? .default }

    /// The app as declared, or the administrator's call is refused with the apps that are (`configDirectory`'s
    /// `apps.d`).
    package func declaredApp(_ appID: String, configDirectory: String) throws(CallError) -> AppConfiguration {
        guard let app = apps[appID] else {
            throw BeacondError(
                .unknownApp,
                UnknownAppMessage.text(appID: appID, declared: Array(apps.keys), configDirectory: configDirectory, suggestFix: false)
            ).callError
        }
        return app
    }
}
