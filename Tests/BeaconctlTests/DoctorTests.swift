import BeaconctlKit
import BeacondAPI
import DBus
import Testing

@Suite("beaconctl doctor verdicts")
struct DoctorTests {
    static let app = Samples.app

    static func failing(_ checks: [DoctorCheck]) -> [DoctorCheck] { checks.filter { !$0.passed } }

    @Test func healthyDaemonAndAppPassEverything() {
        let checks = Doctor.checks(status: Samples.status(), app: Self.app)
        #expect(Self.failing(checks).isEmpty, "\(Self.failing(checks))")
        #expect(
            checks.map(\.title) == [
                "location services on", "state saved", "scanner working", "app com.example.door declared",
                "com.example.door authorized", "com.example.door connected",
                "com.example.door monitors or ranges",
            ])
        #expect(DoctorCheck.json(checks).text.hasPrefix(#"{"Checks":[{"Check":"location services on","Detail":"on","Fix":null,"Passed":true}"#))
    }

    /// A non-admin cannot call GetStatus: the refusal itself must name the group and file in force, not the defaults.
    @Test func adminAccessRefusedNamesTheGroupAndFileInForce() {
        let refusal = BeaconctlError.calling(
            BeacondInterface.admin, BeacondMember.getStatus, on: BusChoice(address: .session),
            DBusCallError(
                name: BeacondErrorName.accessDenied.rawValue,
                message: "org.beacond.Admin1 is for root and members of group 'backup' (admin_group in "
                    + "/srv/conf/beacond.toml); bob (uid 1000) is neither. Fix: sudo usermod -aG backup bob "
                    + "and log in again, or run the command as root"))
        let check = Doctor.adminAccess(refused: refusal)
        #expect(!check.passed)
        #expect(
            check.detail == "org.beacond.Admin1 is for root and members of group 'backup' (admin_group in "
                + "/srv/conf/beacond.toml); bob (uid 1000) is neither")
        #expect(check.fix == "sudo usermod -aG backup bob and log in again, or run the command as root")
        let text = check.lines.joined(separator: "\n")
        #expect(!text.contains("beacond-admin") && !text.contains("/etc/beacond"), "\(text)")
    }

    /// The bus's policy refused before beacond saw the call: beaconctl cannot know the group, and does not guess one.
    @Test func busRefusalNamesNoGroupItCannotKnow() {
        let refusal = BeaconctlError.calling(
            BeacondInterface.admin, BeacondMember.getStatus, on: BusChoice(address: .system),
            DBusCallError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "Rejected send message"))
        let check = Doctor.adminAccess(refused: refusal)
        #expect(check.detail.hasPrefix("the bus refused org.beacond.Admin1.GetStatus: Rejected send message"))
        #expect(check.fix == AdminAccess.fix)
        // beacond-admin only as the default, for which the command is given.
        #expect(!(check.fix ?? "").contains("/etc/beacond/beacond.toml"))
        #expect((check.fix ?? "").contains("for the default, sudo usermod -aG beacond-admin"))
    }

    @Test func servicesOff() {
        let status = Samples.with(Samples.status(), BeacondStatusKey.locationServicesEnabled, .boolean(false))
        let failed = Self.failing(Doctor.checks(status: status, app: nil))
        #expect(failed.map(\.title) == ["location services on"])
        #expect(failed.first?.fix?.contains("beaconctl services on") == true)
        #expect(
            failed.first?.lines == [
                "✗ location services on: off: every app is restricted",
                "    fix: beaconctl services on (or location_services = true in /etc/beacond/beacond.toml)",
            ])
    }

    @Test func servicesOffInBeacondTomlAreFixedThere() {
        var status = Samples.with(Samples.status(), BeacondStatusKey.locationServicesEnabled, .boolean(false))
        status = Samples.with(status, BeacondStatusKey.locationServicesConfigured, .boolean(false))
        status = Samples.with(status, BeacondStatusKey.locationServicesSwitch, .boolean(true))
        status = Samples.with(status, BeacondStatusKey.configDirectory, .string("/srv/beacond-conf"))
        let fix = Self.failing(Doctor.checks(status: status, app: nil)).first?.fix ?? ""
        #expect(fix.contains("location_services = true in /srv/beacond-conf/beacond.toml"), "\(fix)")
        #expect(!fix.contains("services on"), "suggests a switch that cannot turn them on: \(fix)")
        status = Samples.with(status, BeacondStatusKey.locationServicesSwitch, .boolean(false))
        let both = Self.failing(Doctor.checks(status: status, app: nil)).first?.fix ?? ""
        #expect(both.contains("beaconctl services on") && both.contains("/srv/beacond-conf/beacond.toml"), "\(both)")
    }

    @Test func fixesNameTheDaemonsConfigDirectory() {
        var status = Samples.with(Samples.status(), BeacondStatusKey.configDirectory, .string("/srv/beacond-conf"))
        status = Samples.with(status, BeacondStatusKey.scannerState, .string("failed: cannot open"))
        status = Samples.with(status, BeacondStatusKey.scanner, .string("hci:hci0"))
        let checks = Doctor.checks(status: status, app: "org.unknown")
        let fixes = Self.failing(checks).compactMap(\.fix).joined(separator: "\n")
        #expect(fixes.contains("/srv/beacond-conf/beacond.toml") && fixes.contains("/srv/beacond-conf/apps.d/"), "\(fixes)")
        #expect(!fixes.contains("/etc/beacond"), "\(fixes)")
    }

    @Test func aFailedFifoScannerIsNotARadioProblem() {
        let status = Samples.with(Samples.status(), BeacondStatusKey.scannerState, .string("failed: cannot open the FIFO"))
        let fix = Self.failing(Doctor.checks(status: status, app: nil)).first?.fix ?? ""
        #expect(!fix.contains("rfkill") && !fix.contains("bluetoothctl"), "\(fix)")
        #expect(fix.contains("/run/beacond/fifo"), "\(fix)")
    }

    @Test func aStateErrorShowsTheDaemonsOwnFix() {
        let error =
            "/var/lib/beacond/state.sqlite: the state database was deleted while beacond runs, and a new one "
            + "cannot be written: cannot create the state directory (create it and make it writable)"
        let status = Samples.with(Samples.status(), BeacondStatusKey.stateError, .string(error))
        let check = Self.failing(Doctor.checks(status: status, app: nil)).first
        #expect(check?.detail == error)
        #expect(check?.fix?.contains("free space") == false, "\(check?.fix ?? "")")
    }

    @Test func aRejectedReloadFailsItsCheck() {
        let status = Samples.with(
            Samples.status(), BeacondStatusKey.configurationError,
            .string("/etc/beacond/beacond.toml:4: exit_timeout = -4 must be > 0"))
        let failed = Self.failing(Doctor.checks(status: status, app: nil))
        #expect(failed.map(\.title) == ["configuration on disk in force"])
        #expect(failed.first?.detail.contains("beacond.toml:4") == true)
        #expect(failed.first?.fix?.contains("systemctl reload beacond") == true)
        #expect(StatusText.status(status, now: Samples.now).contains { $0.contains("REJECTED") && $0.contains("beacond.toml:4") })
    }

    @Test func failedScannerShowsTheReason() {
        let status = Samples.with(Samples.status(), BeacondStatusKey.scannerState, .string("failed: no adapter hci0"))
        let failed = Self.failing(Doctor.checks(status: status, app: nil))
        #expect(failed.first?.detail == "fifo:/run/beacond/fifo: failed: no adapter hci0")
    }

    @Test func bluetoothScannersNeedAPoweredAdapter() {
        var status = Samples.with(Samples.status(), BeacondStatusKey.scanner, .string("hci:hci0"))
        #expect(Self.failing(Doctor.checks(status: status, app: nil)).first?.detail == "none found")
        status = Samples.with(
            status, BeacondStatusKey.adapters,
            Samples.dictionaries([
                [
                    BeacondAdapterKey.name: .string("hci0"), BeacondAdapterKey.address: .string("00:1A:7D:DA:71:13"),
                    BeacondAdapterKey.powered: .boolean(false),
                ]
            ]))
        let off = Self.failing(Doctor.checks(status: status, app: nil))
        #expect(off.first?.detail == "hci0 powered off")
        #expect(off.first?.fix?.contains("bluetoothctl power on") == true)
        status = Samples.with(
            status, BeacondStatusKey.adapters,
            Samples.dictionaries([
                [BeacondAdapterKey.name: .string("hci0"), BeacondAdapterKey.powered: .boolean(true)]
            ]))
        #expect(Self.failing(Doctor.checks(status: status, app: nil)).isEmpty)
    }

    @Test func undeclaredAppStopsTheAppChecks() {
        let checks = Doctor.checks(status: Samples.status(), app: "org.other")
        #expect(checks.last?.title == "app org.other declared")
        #expect(checks.last?.passed == false)
        #expect(checks.last?.fix?.contains("/etc/beacond/apps.d/org.other.toml") == true)
    }

    @Test(arguments: [
        (BeacondStatus.notDetermined, BeacondRequestKind.always, "beaconctl auth grant com.example.door always"),
        (BeacondStatus.notDetermined, BeacondRequestKind.whenInUse, "beaconctl auth grant com.example.door when-in-use"),
        (BeacondStatus.notDetermined, "", "RequestWhenInUseAuthorization"),
        (BeacondStatus.denied, "", "beaconctl auth grant com.example.door"),
        (BeacondStatus.restricted, "", "beaconctl auth grant com.example.door"),
    ])
    func unauthorizedAppsGetTheRightFix(status: String, pending: String, fix: String) {
        let checks = Doctor.checks(status: Samples.status(appStatus: status, pending: pending), app: Self.app)
        let authorization = checks.first { $0.title == "com.example.door authorized" }
        #expect(authorization?.passed == false)
        #expect(authorization?.fix?.contains(fix) == true, "\(String(describing: authorization))")
    }

    @Test func whenInUseIsEnoughForRangingButNotWhileInBackground() {
        let background = Samples.status(
            appStatus: BeacondStatus.authorizedWhenInUse,
            clients: [
                Samples.client(
                    path: "/org/beacond/client/1", status: BeacondStatus.authorizedWhenInUse,
                    inUse: false, regions: 0, ranging: 1)
            ], regions: [])
        let checks = Doctor.checks(status: background, app: Self.app)
        #expect(checks.first { $0.title == "com.example.door authorized" }?.passed == true)
        let connected = checks.first { $0.title == "com.example.door connected" }
        #expect(connected?.passed == false)
        #expect(connected?.fix?.contains("SetInUse(true)") == true)
    }

    @Test func noClientConnected() {
        let nobody = Samples.status(clients: [], regions: [])
        let failed = Self.failing(Doctor.checks(status: nobody, app: Self.app))
        #expect(failed.map(\.title) == ["com.example.door connected", "com.example.door monitors or ranges"])
        #expect(failed.first?.fix?.contains("RegisterClient(\"com.example.door\")") == true)
        #expect(failed.last?.fix?.contains("StartMonitoring") == true)
    }

    @Test func alwaysMonitoringCarriesOnWithoutAConnection() {
        let gone = Samples.status(clients: [Samples.client(path: "/org/beacond/client/1", connected: false, inUse: false)])
        #expect(Self.failing(Doctor.checks(status: gone, app: Self.app)).isEmpty)
    }

    @Test("a state database that cannot be written fails the check, with the reason and the fix")
    func stateDatabase() {
        let healthy = Doctor.checks(status: Samples.status(), app: nil)
        #expect(healthy.contains { $0.title == "state saved" && $0.passed })
        let status = Samples.with(
            Samples.status(), BeacondStatusKey.stateError,
            .string("SQLite error 13: database or disk is full"))
        let failed = Self.failing(Doctor.checks(status: status, app: nil))
        #expect(failed.map(\.title) == ["state saved"])
        #expect(failed.first?.detail.contains("disk is full") == true)
        #expect(failed.first?.fix?.contains("message above") == true)
    }
}

@Suite("beaconctl doctor: the MQTT broker")
struct MQTTDoctorTests {
    static func status(state: String, detail: String = "", refused: String = "") -> VarDict {
        var status = Samples.status()
        for (key, value) in [
            (BeacondStatusKey.mqttBroker, "mqtt://192.0.2.10:1883"), (BeacondStatusKey.mqttState, state),
            (BeacondStatusKey.mqttDetail, detail), (BeacondStatusKey.mqttRoom, "hall"),
            (BeacondStatusKey.mqttRefused, refused),
        ] {
            status = Samples.with(status, key, .string(value))
        }
        return status
    }

    static func broker(_ status: VarDict) -> DoctorCheck? {
        Doctor.checks(status: status, app: nil).first { $0.title.hasPrefix("MQTT") }
    }

    @Test func offMeansNoCheckAndConnectedPasses() {
        #expect(Self.broker(Samples.status()) == nil)
        let check = Self.broker(Self.status(state: "connected"))
        #expect(check?.passed == true && check?.lines == ["✓ MQTT broker connected: mqtt://192.0.2.10:1883 as room hall"])
    }

    @Test(arguments: [
        ("the broker refused the connection: Not authorized", "username and password_file"),
        ("the connection was lost: TLS error: OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed", "ca_file"),
        ("cannot connect to 192.0.2.10:1883: Connection refused", "start the broker"),
        ("cannot connect to 192.0.2.10:1883: Address family not supported by protocol", "mqtt.conf"),
        ("cannot connect to 192.0.2.10:1883: Operation not permitted", "IPAddressAllow"),
        ("something new", "journalctl -u beacond"),
    ])
    func eachFailureGetsItsFix(detail: String, fix: String) {
        let check = Self.broker(Self.status(state: "waiting", detail: detail))
        #expect(check?.passed == false && check?.title == "MQTT broker connected")
        #expect(check?.fix?.contains(fix) == true, "\(check?.fix ?? "")")
        #expect(check?.lines.first?.contains(detail) == true)
    }

    @Test func aRefusedPublicationNamesTheACLAndAFailedStartTheFile() {
        let refused = Self.broker(Self.status(state: "connected", refused: "espresense/rooms/hall/status: Not authorized"))
        #expect(refused?.title == "MQTT publications accepted" && refused?.passed == false)
        #expect(refused?.fix?.contains("ACL") == true)
        let failed = Self.broker(Self.status(state: "failed", detail: "ca_file /x: No such file or directory"))
        #expect(failed?.passed == false && failed?.fix?.contains("[mqtt] in /etc/beacond/beacond.toml") == true)
    }
}
