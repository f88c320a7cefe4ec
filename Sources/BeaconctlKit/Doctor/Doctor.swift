public import DBus
import BeacondAPI

/// Why a client gets no events, from beacond's own status: the checks after "the daemon answers", in the
/// order a problem would hide the next one. Pure, so every verdict is tested without a daemon.
public enum Doctor {
    /// Fixes for the checks `beaconctl doctor` makes before it has a status.
    public enum Fix {
        public static func bus(_ bus: BusChoice) -> String {
            bus.address == .system
                ? "start the system bus (systemctl start dbus), or choose a bus with --bus or $\(BusChoice.environmentVariable)"
                : "check the address, or choose a bus with --bus system|session|ADDRESS"
        }
        public static func daemon(_ bus: BusChoice) -> String { bus.startAdvice }
    }

    /// `GetStatus` refused (`Admin1`). beacond's own AccessDenied names the admin_group in force, the beacond.toml
    /// it is set in and, after "Fix: ", what to run; the bus's (its policy refused before beacond saw the call)
    /// ends in beaconctl's own fix. Either way the fix shown is the one the message ends in, so doctor never names
    /// a group or a file other than the message's.
    public static func adminAccess(refused error: BeaconctlError) -> DoctorCheck {
        let title = "admin access (\(BeacondInterface.admin))"
        guard error.exitStatus == ExitStatus.noPermission else {
            return DoctorCheck(title, passed: false, error.message, fix: "journalctl -u beacond -e")
        }
        guard let marker = error.message.ranges(of: " Fix: ").last else {
            return DoctorCheck(title, passed: false, error.message, fix: AdminAccess.fix)
        }
        var detail = error.message[..<marker.lowerBound]
        if detail.last == "." { detail.removeLast() }
        return DoctorCheck(title, passed: false, String(detail), fix: String(error.message[marker.upperBound...]))
    }

    /// Checks on `GetStatus()`; with `app`, also that app's declaration, authorization, clients and regions.
    public static func checks(status: VarDict, app: String?) -> [DoctorCheck] {
        var checks = [locationServices(status), stateDatabase(status), scanner(status)]
        if let rejected = configurationOnDisk(status) { checks.append(rejected) }
        if let adapters = adapters(status) { checks.append(adapters) }
        if let broker = mqttBroker(status) { checks.append(broker) }
        if let app { checks += appChecks(status: status, app: app) }
        return checks
    }

    /// The daemon's configuration directory (`--config-dir`), not a guess.
    static func configDirectory(_ status: VarDict) -> String {
        status.string(BeacondStatusKey.configDirectory) ?? "/etc/beacond"
    }

    /// Services are on only when beacond.toml's `location_services` and the administrator's switch both are: the
    /// fix names the one that is off (`beaconctl services on` cannot override the file).
    static func locationServices(_ status: VarDict) -> DoctorCheck {
        let enabled = status.bool(BeacondStatusKey.locationServicesEnabled) == true
        let file = "\(configDirectory(status))/beacond.toml"
        guard let configured = status.bool(BeacondStatusKey.locationServicesConfigured),
            let switched = status.bool(BeacondStatusKey.locationServicesSwitch)
        else {
            // A beacond that does not say which half is off.
            return DoctorCheck(
                "location services on", passed: enabled, enabled ? "on" : "off: every app is restricted",
                fix: "beaconctl services on (or location_services = true in \(file))")
        }
        var fixes: [String] = []
        if !configured { fixes.append("set location_services = true in \(file), then: sudo systemctl reload beacond") }
        if !switched { fixes.append("beaconctl services on") }
        let why = !configured ? "off in \(file)" : "off"
        return DoctorCheck(
            "location services on", passed: enabled, enabled ? "on" : "\(why): every app is restricted",
            fix: fixes.joined(separator: "; and "))
    }

    /// The files on disk were rejected at the last reload: the configuration in force is an older one.
    static func configurationOnDisk(_ status: VarDict) -> DoctorCheck? {
        guard let error = status.string(BeacondStatusKey.configurationError), !error.isEmpty else { return nil }
        return DoctorCheck(
            "configuration on disk in force", passed: false,
            "rejected at the last reload, the previous configuration stays in force: \(error)",
            fix: "correct the file at that line, then: sudo systemctl reload beacond")
    }

    /// Whether beacond can save what it must not forget (decisions, regions, queued events).
    static func stateDatabase(_ status: VarDict) -> DoctorCheck {
        let directory = status.string(BeacondStatusKey.stateDirectory) ?? "the state directory"
        guard let error = status.string(BeacondStatusKey.stateError), !error.isEmpty else {
            return DoctorCheck("state saved", passed: true, directory)
        }
        // The daemon's message names the problem and its fix (a full disk, a deleted directory, a replaced file).
        return DoctorCheck(
            "state saved", passed: false, error,
            fix: "do what the message above says (the fix is in its last parentheses); beacond saves what "
                + "it kept in memory within seconds of that, on its own. Details: journalctl -u beacond -e")
    }

    /// With `[mqtt]` on: connected, and no publication refused. The fix follows the broker's or the system's words.
    static func mqttBroker(_ status: VarDict) -> DoctorCheck? {
        typealias K = BeacondStatusKey
        guard let broker = status.string(K.mqttBroker), !broker.isEmpty else { return nil }
        let title = "MQTT broker connected"
        let file = "\(configDirectory(status))/beacond.toml"
        let detail = status.string(K.mqttDetail) ?? ""
        switch status.string(K.mqttState) ?? "?" {
        case "connected":
            if let refused = status.string(K.mqttRefused), !refused.isEmpty {
                return DoctorCheck(
                    "MQTT publications accepted", passed: false, "\(broker) refused \(refused)",
                    fix: "let this node's user publish to espresense/# in the broker's ACL (Mosquitto: "
                        + "acl_file with 'topic readwrite espresense/#' under its user), then restart beacond")
            }
            let room = status.string(K.mqttRoom) ?? "?"
            return DoctorCheck(title, passed: true, "\(broker) as room \(room)")
        case "failed":
            return DoctorCheck(
                title, passed: false, "not started: \(detail)",
                fix: "correct [mqtt] in \(file), then: sudo systemctl reload beacond")
        default:
            return DoctorCheck(
                title, passed: false, "\(broker): \(detail.isEmpty ? "connecting" : detail)",
                fix: mqttFix(detail, broker: broker, file: file))
        }
    }

    static func mqttFix(_ detail: String, broker: String, file: String) -> String {
        let text = detail.lowercased()
        if text.contains("not authori") || text.contains("bad user name or password") {
            return "the broker refused this node's credentials: check username and password_file in [mqtt] of \(file) "
                + "against the broker's password file, then: sudo systemctl reload beacond"
        }
        if text.contains("certificate verify failed") || text.contains("tls") || text.contains("ssl") {
            return "the broker's certificate is not trusted: set ca_file in [mqtt] of \(file) to the CA that signed it "
                + "(and the broker's name in broker must match the certificate), then: sudo systemctl reload beacond"
        }
        if text.contains("address family not supported") || text.contains("operation not permitted") {
            return "the service's sandbox allows no IP to the broker: install the drop-in of systemd/README.md, \"MQTT\" "
                + "(/usr/share/doc/beacond/systemd/mqtt.conf in /etc/systemd/system/beacond.service.d/) with the broker's "
                + "address in IPAddressAllow=, then: sudo systemctl daemon-reload && sudo systemctl restart beacond"
        }
        if text.contains("refused") || text.contains("no route") || text.contains("unreachable") || text.contains("lookup") {
            return "nothing accepts connections at \(broker): start the broker (systemctl start mosquitto) or correct "
                + "broker in [mqtt] of \(file); beacond retries by itself"
        }
        return "see journalctl -u beacond -e for the broker's answers; beacond retries by itself"
    }

    static func scanner(_ status: VarDict) -> DoctorCheck {
        let source = status.string(BeacondStatusKey.scanner) ?? "?"
        let state = status.string(BeacondStatusKey.scannerState) ?? "?"
        if state.hasPrefix(BeacondScannerState.failedPrefix) || state.hasPrefix(BeacondScannerState.waitingPrefix) || state == "?" {
            let file = "\(configDirectory(status))/beacond.toml"
            let fix: String
            if source.hasPrefix("fifo:") || source.hasPrefix("replay:") {
                // No radio involved: the path is the problem.
                let path = source.drop { $0 != ":" }.dropFirst()
                fix =
                    "check that \(path) can be \(source.hasPrefix("fifo:") ? "created or opened as a FIFO" : "read as a capture") "
                    + "by the daemon's user, or change [scanner] source in \(file); details: journalctl -u beacond -e"
            } else {
                fix =
                    "check [scanner] source in \(file) and journalctl -u beacond -e; "
                    + "for Bluetooth: rfkill unblock bluetooth; bluetoothctl power on"
            }
            return DoctorCheck("scanner working", passed: false, "\(source): \(state)", fix: fix)
        }
        let note = state == BeacondScannerState.idle ? " (scans only while a client monitors or ranges)" : ""
        return DoctorCheck("scanner working", passed: true, "\(source): \(state)\(note)")
    }

    /// Nil for scanners that need no radio (replay and fifo sources).
    static func adapters(_ status: VarDict) -> DoctorCheck? {
        let source = status.string(BeacondStatusKey.scanner) ?? ""
        if source.hasPrefix("replay:") || source.hasPrefix("fifo:") { return nil }
        let adapters = status.dictionaries(BeacondStatusKey.adapters)
        let title = "Bluetooth adapter present"
        guard !adapters.isEmpty else {
            return DoctorCheck(
                title, passed: false, "none found",
                fix: "plug in an adapter; check bluetoothctl list, rfkill list, systemctl status bluetooth")
        }
        let names = adapters.compactMap { $0.string(BeacondAdapterKey.name) }
        guard adapters.contains(where: { $0.bool(BeacondAdapterKey.powered) == true }) else {
            return DoctorCheck(
                title, passed: false, "\(names.joined(separator: ", ")) powered off",
                fix: "rfkill unblock bluetooth; bluetoothctl power on")
        }
        return DoctorCheck(title, passed: true, names.joined(separator: ", "))
    }

    static func appChecks(status: VarDict, app: String) -> [DoctorCheck] {
        guard
            let declaration = status.dictionaries(StatusListKey.apps)
                .first(where: { $0.string(BeacondAppKey.appID) == app })
        else {
            return [
                DoctorCheck(
                    "app \(app) declared", passed: false, "beacond knows no app \(app)",
                    fix: "create \(configDirectory(status))/apps.d/\(app).toml (app_id, users, when_in_use_usage, always_usage; "
                        + "see the shipped example.toml), then: sudo systemctl reload beacond")
            ]
        }
        var checks = [DoctorCheck("app \(app) declared", passed: true, declaration.string(BeacondAppKey.declarationFile) ?? "yes")]
        // The stored decision (Apps does not show "restricted while services are off": checked above).
        let authorization = declaration.string(BeacondAppKey.authorizationStatus) ?? "?"
        checks.append(
            authorizationCheck(
                app: app, status: authorization,
                pending: declaration.string(BeacondAppKey.pendingRequest) ?? ""))
        let clients = status.dictionaries(StatusListKey.clients).filter { $0.string(BeacondClientKey.appID) == app }
        // The app's count from ListApps: the regions themselves may be many, and doctor needs only how many.
        let regions = Int(declaration.integer(BeacondAppKey.monitoredRegions) ?? 0)
        checks.append(clientCheck(app: app, status: authorization, clients: clients, regions: regions))
        checks.append(activityCheck(app: app, clients: clients, regions: regions))
        return checks
    }

    static func authorizationCheck(app: String, status: String, pending: String) -> DoctorCheck {
        let title = "\(app) authorized"
        switch status {
        case BeacondStatus.authorizedAlways:
            return DoctorCheck(title, passed: true, status)
        case BeacondStatus.authorizedWhenInUse:
            return DoctorCheck(
                title, passed: true,
                "\(status) (ranging while in use; monitoring needs always: "
                    + "beaconctl auth grant \(app) always)")
        case BeacondStatus.notDetermined where !pending.isEmpty:
            let level = AuthorizationLevel(request: pending).rawValue
            return DoctorCheck(
                title, passed: false, "\(status): its \(pending) request waits for an administrator",
                fix: "beaconctl auth grant \(app) \(level)   (or: beaconctl auth deny \(app))")
        case BeacondStatus.notDetermined:
            return DoctorCheck(
                title, passed: false, "\(status): the app has not requested authorization",
                fix: "the app calls RequestWhenInUseAuthorization or RequestAlwaysAuthorization; "
                    + "or decide ahead: beaconctl auth grant \(app) when-in-use|always")
        case BeacondStatus.denied, BeacondStatus.restricted:
            return DoctorCheck(
                title, passed: false, "\(status) by the administrator's decision or policy",
                fix: "beaconctl auth grant \(app) when-in-use|always (if location services are off: beaconctl services on)")
        default:
            return DoctorCheck(
                title, passed: false, "unknown status '\(status)'",
                fix: "beaconctl and beacond may be different versions")
        }
    }

    static func clientCheck(app: String, status: String, clients: [VarDict], regions: Int) -> DoctorCheck {
        let title = "\(app) connected"
        let connected = clients.filter { $0.bool(BeacondClientKey.connected) == true }
        guard !connected.isEmpty else {
            if status == BeacondStatus.authorizedAlways, regions > 0 {
                return DoctorCheck(
                    title, passed: true,
                    "no client connected; its Always monitoring continues "
                        + "and events are queued for its next connection")
            }
            return DoctorCheck(
                title, passed: false, "no client of \(app) is connected",
                fix: "start the app: it calls RegisterClient(\"\(app)\") on \(BeacondBus.name) and keeps "
                    + "its connection open (try: beaconctl client --app \(app) range UUID)")
        }
        if status == BeacondStatus.authorizedWhenInUse,
            !connected.contains(where: { $0.bool(BeacondClientKey.inUse) == true })
        {
            return DoctorCheck(
                title, passed: false, "\(connected.count) connected, none in use: ranging is paused",
                fix: "the app calls SetInUse(true) while in use, or: beaconctl auth grant \(app) always")
        }
        let paths = connected.compactMap { $0.string(BeacondClientKey.path) }
        return DoctorCheck(title, passed: true, "\(connected.count) client(s): \(paths.joined(separator: ", "))")
    }

    static func activityCheck(app: String, clients: [VarDict], regions: Int) -> DoctorCheck {
        let ranging = clients.compactMap { $0.integer(BeacondClientKey.rangedConstraints) }.reduce(0, +)
        let monitored = max(regions, Int(clients.compactMap { $0.integer(BeacondClientKey.monitoredRegions) }.reduce(0, +)))
        let title = "\(app) monitors or ranges"
        guard monitored + Int(ranging) > 0 else {
            return DoctorCheck(
                title, passed: false, "no monitored region and no ranging",
                fix: "the app calls StartMonitoring or StartRanging "
                    + "(try: beaconctl client --app \(app) monitor UUID)")
        }
        return DoctorCheck(title, passed: true, "\(monitored) region(s), \(ranging) ranging constraint(s)")
    }
}
