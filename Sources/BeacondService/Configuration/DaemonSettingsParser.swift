import BeaconKit
import BeacondCore

/// Reads `beacond.toml`: sections `[authorization]`, `[monitoring]`, `[rooms]`, `[background]`, `[clients]`,
/// `[scanner]` and `[mqtt]`; an absent key keeps
/// its default. Unknown sections and keys are warnings.
enum DaemonSettingsParser {
    /// Valid values of `max_regions_per_client`: at least one (zero would make monitoring impossible), at most
    /// ten thousand (each region costs memory and matching time on every sighting).
    static let regionLimitRange = 1...10_000
    /// Valid `max_clients_per_app` and `max_clients_per_user`: one to a thousand connected clients (each is an
    /// exported object and a session; a ranging one costs a ranging cycle each second).
    static let clientLimitRange = 1...1_000
    /// Valid `queue_limit`: one to a hundred thousand events per app (each is a row in the state database).
    static let queueLimitRange = 1...100_000
    /// Valid `queue_ttl`, seconds: a minute to a year.
    static let queueTTLRange = 60...31_536_000
    /// Valid `activation_interval`, seconds: one second to a day.
    static let activationIntervalRange = 1...86_400

    static func parse(_ document: TOMLDocument) throws(ConfigurationError) -> DaemonConfiguration {
        var configuration = DaemonConfiguration.defaults
        configuration.configFile = document.file
        var root = document.rootReader
        var sectionOfKey: [String: String] = [:]
        var authorization = try root.tableOrEmpty("authorization")
        try readAuthorization(&authorization, into: &configuration)
        var monitoring = try root.tableOrEmpty("monitoring")
        try readMonitoring(&monitoring, into: &configuration)
        var rooms = try root.tableOrEmpty("rooms")
        try readRooms(&rooms, into: &configuration)
        var background = try root.tableOrEmpty("background")
        try readBackground(&background, into: &configuration)
        var clients = try root.tableOrEmpty("clients")
        try readClients(&clients, into: &configuration)
        var scanner = try root.tableOrEmpty("scanner")
        if let source = try scanner.string("source", example: "auto") {
            configuration.scanner = try ScannerSpec(
                parsing: source, source: document.file,
                line: scanner.line(of: "source"))
        }
        var mqtt = try root.tableOrEmpty("mqtt")
        configuration.mqtt = try MQTTSettingsParser.read(&mqtt)
        for section in [authorization, monitoring, rooms, background, clients, scanner, mqtt] {
            configuration.warnings += section.unknownKeyWarnings()
            for key in section.knownKeys { sectionOfKey[key] = section.path.joined(separator: ".") }
        }
        configuration.warnings += root.unknownKeyWarnings(
            knownName: "known sections", hints: sectionOfKey.mapValues { "it belongs in [\($0)]" })
        configuration.warnings.sort { ($0.line ?? 0) < ($1.line ?? 0) }
        return configuration
    }

    private static func readAuthorization(
        _ section: inout TOMLTableReader,
        into configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        if let enabled = try section.bool("location_services") {
            configuration.locationServicesEnabled = enabled
        }
        if let text = try section.string("prompt", example: "admin") {
            let choices = AuthorizationPrompt.allCases.map(\.rawValue).joined(separator: ", ")
            guard let prompt = AuthorizationPrompt(rawValue: text) else {
                throw section.error(
                    "prompt", "prompt = \"\(text)\" is not one of \(choices)",
                    fix: "write e.g. prompt = \"admin\": an administrator decides each request")
            }
            configuration.prompt = prompt
        }
        if let group = try section.string("admin_group", example: "beacond-admin") {
            guard ConfigurationNames.isUnixName(group) else {
                throw section.error(
                    "admin_group", "admin_group = \"\(group)\" is not a valid unix group name",
                    fix: "name an existing group, e.g. admin_group = \"beacond-admin\"")
            }
            configuration.adminGroup = group
        }
    }

    private static func readMonitoring(
        _ section: inout TOMLTableReader,
        into configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        if let seconds = try section.number("exit_timeout", example: "30") {
            configuration.exitTimeout = try exitTimeout(seconds, section: section)
        }
        if let seconds = try section.number("exit_timeout_min", example: "3") {
            guard seconds.isFinite,
                seconds == 0 || (seconds >= 0.1 && seconds <= Double(MonitoringConfiguration.longestExitTimeout.components.seconds))
            else {
                throw section.error(
                    "exit_timeout_min", "exit_timeout_min = \(seconds) is out of range",
                    fix: "write 0 (adaptive exits off) or at least 0.1 seconds, e.g. exit_timeout_min = 3 "
                        + "with exit_timeout = 180")
            }
            configuration.exitTimeoutMinimum = seconds == 0 ? nil : .microseconds(Int64((seconds * 1_000_000).rounded()))
        }
        if let chance = try section.number("exit_chance", example: "0.001") {
            guard chance.isFinite, AdaptiveExit.chanceRange.contains(chance) else {
                throw section.error(
                    "exit_chance", "exit_chance = \(chance) is out of range",
                    fix: "write a probability from 1e-12 to 0.5: the chance per hour that a present beacon is "
                        + "wrongly exited, e.g. exit_chance = 0.001")
            }
            configuration.exitChance = chance
            if configuration.exitTimeoutMinimum == nil, chance != DaemonConfiguration.defaults.exitChance {
                configuration.warnings.append(
                    ConfigurationDiagnostic(
                        file: section.document.file, line: section.line(of: "exit_chance"),
                        message: "exit_chance has no effect while exit_timeout_min is 0 (exits are fixed): set exit_timeout_min "
                            + "(e.g. 3) to use adaptive exits, or remove exit_chance"))
            }
        }
        if let minimum = configuration.exitTimeoutMinimum, minimum > configuration.exitTimeout {
            throw section.error(
                "exit_timeout_min",
                "exit_timeout_min (\(minimum)) is longer than exit_timeout "
                    + "(\(configuration.exitTimeout))",
                fix: "adaptive exits fall between the two: raise exit_timeout (e.g. exit_timeout = 180) or lower exit_timeout_min")
        }
        let clientLimit = try section.integer("max_regions_per_client", in: regionLimitRange)
        if let clientLimit { configuration.maxRegionsPerClient = clientLimit }
        if let limit = try section.integer("max_regions_per_app", in: regionLimitRange) {
            configuration.maxRegionsPerApp = limit
        } else {
            // Unset, it is never below what one client may have: a deployment that raised max_regions_per_client
            // before this key existed keeps every region its apps have at the first start after an upgrade.
            configuration.maxRegionsPerApp = max(configuration.maxRegionsPerApp, configuration.maxRegionsPerClient)
        }
        // Set both ways round, the client's limit could never be reached; the default client limit above a lowered
        // app limit is simply the app's.
        if clientLimit != nil, configuration.maxRegionsPerClient > configuration.maxRegionsPerApp {
            configuration.warnings.append(
                ConfigurationDiagnostic(
                    file: section.document.file, line: section.line(of: "max_regions_per_client"),
                    message: "max_regions_per_client (\(configuration.maxRegionsPerClient)) is above max_regions_per_app "
                        + "(\(configuration.maxRegionsPerApp)): a client can never reach it, as its app's limit counts its regions too. "
                        + "Fix: raise max_regions_per_app or lower max_regions_per_client"))
        }
        let enter = try section.integer("enter_rssi", in: BeaconDictionaries.rssiRange)
        let absent = try section.integer("absent_rssi", in: BeaconDictionaries.rssiRange)
        switch (enter, absent) {
        case (nil, nil): break
        case let (enter?, absent?):
            guard let hysteresis = try? RSSIHysteresis(enterAtOrAbove: enter, absentBelow: absent) else {
                throw section.error(
                    "enter_rssi",
                    "enter_rssi = \(enter) must be at least absent_rssi = \(absent): a "
                        + "sighting strong enough to enter a region cannot also count as absent",
                    fix: "e.g. enter_rssi = -70 and absent_rssi = -80")
            }
            configuration.hysteresis = hysteresis
        case (_?, nil):
            throw section.error(
                "enter_rssi", "enter_rssi is set without absent_rssi",
                fix: "set both (e.g. enter_rssi = -70, absent_rssi = -80) or neither")
        case (nil, _?):
            throw section.error(
                "absent_rssi", "absent_rssi is set without enter_rssi",
                fix: "set both (e.g. enter_rssi = -70, absent_rssi = -80) or neither")
        }
    }

    private static func readRooms(
        _ section: inout TOMLTableReader,
        into configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        var margin = configuration.rooms.margin
        if let value = try section.number("margin", example: "0.3") {
            guard value.isFinite, RoomConfiguration.marginRange.contains(value) else {
                throw section.error(
                    "margin", "margin = \(value) is out of range",
                    fix: "write 0 to 0.9: how much nearer a room must be to take a beacon, e.g. margin = 0.3 (30 %)")
            }
            margin = value
        }
        let dwell = try seconds(
            "dwell", in: &section, upTo: 3600, default: configuration.rooms.dwell, example: "6",
            meaning: "how long a room must keep its lead")
        let smoothing = try seconds(
            "smoothing", in: &section, upTo: 600, default: configuration.rooms.smoothing, example: "4",
            meaning: "how long each receiver's RSSI is smoothed over before rooms compare it")
        if let path = try section.string("floorplan", example: "floorplan.toml") {
            guard !path.isEmpty, !path.contains("\0") else {
                throw section.error(
                    "floorplan", "floorplan = \"\" names no file",
                    fix: "write the floor plan's path, e.g. floorplan = \"floorplan.toml\" (relative to this file's directory), "
                        + "or remove the key")
            }
            configuration.floorPlanSetting = path
        }
        do {
            configuration.rooms = try RoomConfiguration(
                margin: margin, dwell: dwell, staleAfter: configuration.rooms.staleAfter, smoothing: smoothing)
        } catch {
            throw section.error("margin", "\(error)")
        }
    }

    /// A key of seconds from 0 to `limit`, or `default` when absent; out of range, an error at its line with the fix.
    private static func seconds(
        _ key: String, in section: inout TOMLTableReader, upTo limit: Double, default value: Duration, example: String,
        meaning: String
    ) throws(ConfigurationError) -> Duration {
        guard let seconds = try section.number(key, example: example) else { return value }
        guard seconds.isFinite, seconds >= 0, seconds <= limit else {
            throw section.error(
                key, "\(key) = \(seconds) is out of range", fix: "write 0 to \(Int(limit)) seconds: \(meaning), e.g. \(key) = \(example)")
        }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    private static func readClients(
        _ section: inout TOMLTableReader,
        into configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        if let limit = try section.integer("max_clients_per_app", in: clientLimitRange) {
            configuration.maxClientsPerApp = limit
        }
        if let limit = try section.integer("max_clients_per_user", in: clientLimitRange) {
            configuration.maxClientsPerUser = limit
        }
    }

    private static func readBackground(
        _ section: inout TOMLTableReader,
        into configuration: inout DaemonConfiguration
    ) throws(ConfigurationError) {
        if let limit = try section.integer("queue_limit", in: queueLimitRange) {
            configuration.queueLimit = limit
        }
        if let seconds = try section.integer("queue_ttl", in: queueTTLRange) {
            configuration.queueTTL = .seconds(seconds)
        }
        if let seconds = try section.integer("activation_interval", in: activationIntervalRange) {
            configuration.activationInterval = .seconds(seconds)
        }
    }

    /// Seconds, fractions allowed, rounded to the microsecond (the monitor's clock resolution), within the
    /// range `MonitoringConfiguration` accepts.
    private static func exitTimeout(_ seconds: Double, section: TOMLTableReader) throws(ConfigurationError)
        -> Duration
    {
        let longest = MonitoringConfiguration.longestExitTimeout.components.seconds
        let fix =
            "write the seconds of silence after which a region is exited, more than 0 and at most "
            + "\(longest), that is one year, e.g. exit_timeout = 30"
        // As written: `-5`, not `-5.0`, when the file holds an integer.
        let shown =
            seconds.isFinite && seconds == seconds.rounded() && abs(seconds) < 1e15
            ? String(Int64(seconds)) : "\(seconds)"
        guard seconds.isFinite, seconds > 0 else {
            throw section.error(
                "exit_timeout", "exit_timeout = \(shown) is not a positive number of seconds",
                fix: fix)
        }
        guard seconds <= Double(longest) else {
            throw section.error("exit_timeout", "exit_timeout = \(shown) is longer than a year", fix: fix)
        }
        let microseconds = Int64((seconds * 1_000_000).rounded())
        guard microseconds >= 1 else {
            throw section.error(
                "exit_timeout", "exit_timeout = \(shown) is shorter than one microsecond",
                fix: fix)
        }
        return .microseconds(microseconds)
    }
}
