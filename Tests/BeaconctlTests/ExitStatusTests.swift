import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import TestKit
import Testing

@Suite("beaconctl exit statuses and messages")
struct ExitStatusTests {
    static let bus = BusChoice(address: .system)

    static func mapped(
        _ name: String, _ message: String = "the daemon's message",
        interface: String = BeacondInterface.admin
    ) -> BeaconctlError {
        .calling(interface, BeacondMember.getStatus, on: bus, DBusCallError(name: name, message: message))
    }

    @Test(arguments: BeacondErrorName.allCases)
    func everyBeacondErrorKeepsTheDaemonsMessage(name: BeacondErrorName) {
        let error = Self.mapped(name.rawValue, "monitoring needs authorizedAlways; ask: beaconctl auth grant APP always")
        #expect(error.exitStatus == (name == .accessDenied ? ExitStatus.noPermission : ExitStatus.failure))
        #expect(error.message == "monitoring needs authorizedAlways; ask: beaconctl auth grant APP always")
        #expect(error.dbusName == name.rawValue)
    }

    @Test func busPolicyDenialNamesTheAdminGroup() {
        let error = Self.mapped("org.freedesktop.DBus.Error.AccessDenied", "Rejected send message")
        #expect(error.exitStatus == 77)
        #expect(error.message.contains("Rejected send message"))
        #expect(error.message.contains("usermod -aG beacond-admin"))
        let client = Self.mapped("org.freedesktop.DBus.Error.AccessDenied", "Rejected", interface: BeacondInterface.manager)
        #expect(client.exitStatus == 77)
        #expect(!client.message.contains("usermod"), "only Admin1 is about the admin group")
    }

    @Test(arguments: ["ServiceUnknown", "NameHasNoOwner"])
    func daemonNotRunningSaysHowToStartIt(name: String) {
        let error = Self.mapped("org.freedesktop.DBus.Error." + name)
        #expect(error.exitStatus == 69)
        #expect(error.message.contains("systemctl start beacond"))
        #expect(error.message.contains("journalctl -u beacond"))
    }

    @Test(arguments: ["NoReply", "Timeout", "TimedOut", "NoServer", "Disconnected", "Spawn.ChildExited", "Spawn.ExecFailed"])
    func unreachableIs69(name: String) {
        #expect(Self.mapped("org.freedesktop.DBus.Error." + name).exitStatus == 69)
    }

    @Test(arguments: [
        "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.DBus.Error.InvalidArgs", "com.example.Weird",
    ])
    func otherErrorsAre1(name: String) {
        let error = Self.mapped(name, "details")
        #expect(error.exitStatus == 1)
        #expect(error.message.contains("details"))
    }

    @Test func versionMismatchIsNamed() {
        #expect(Self.mapped("org.freedesktop.DBus.Error.UnknownMethod").message.contains("different versions"))
    }

    @Test func connectionFailureIs69AndNamesTheBus() {
        let error = BeaconctlError.connecting(
            to: BusChoice(parsing: "unix:path=/nonexistent"),
            DBusCallError(name: "org.freedesktop.DBus.Error.FileNotFound", message: "No such file"))
        #expect(error.exitStatus == 69)
        #expect(error.message.contains("the bus at unix:path=/nonexistent"))
        #expect(error.message.contains("--bus"))
        #expect(BeaconctlError.daemonLeft(Self.bus).exitStatus == 69)
    }

    @Test func sysexitsValues() {
        #expect(
            [ExitStatus.success, ExitStatus.failure, ExitStatus.usage, ExitStatus.unavailable, ExitStatus.noPermission]
                == [0, 1, 64, 69, 77])
        for code in ["0 ", "1 ", "64", "69", "77"] {
            #expect(ExitStatus.helpText.contains("\n  \(code)"), "help lacks \(code)")
        }
    }
}

@Suite("beaconctl arguments")
struct ArgumentTests {
    @Test func busChoicePrefersOptionThenEnvironmentThenSystem() {
        #expect(BusChoice.resolve(option: nil, environment: [:]).address == .system)
        #expect(BusChoice.resolve(option: nil, environment: ["BEACOND_BUS": ""]).address == .system)
        #expect(BusChoice.resolve(option: nil, environment: ["BEACOND_BUS": "session"]).address == .session)
        #expect(BusChoice.resolve(option: DBusBusAddress(parsing: "system"), environment: ["BEACOND_BUS": "session"]).address == .system)
        #expect(BusChoice.resolve(option: DBusBusAddress(parsing: "unix:path=/tmp/b"), environment: [:]).address == .address("unix:path=/tmp/b"))
        #expect(BusChoice(parsing: "unix:path=/tmp/b").description == "the bus at unix:path=/tmp/b")
    }

    @Test(arguments: ["", "nope", "\(Samples.uuid):70000", "\(Samples.uuid):1:2:3", "\(Samples.uuid)::5", "\(Samples.uuid):-1"])
    func malformedConstraintsAreRefusedWithTheForm(text: String) {
        let error = #expect(throws: BeaconIdentityConstraint.Invalid.self) { try BeaconIdentityConstraint(parsing: text) }
        let message = error?.description ?? ""
        #expect(message.contains("UUID[:MAJOR[:MINOR]]") || message.contains("a minor needs a major"), "\(message)")
    }

    @Test func authorizationLevels() {
        #expect(AuthorizationLevel.always.status == BeacondStatus.authorizedAlways)
        #expect(AuthorizationLevel.whenInUse.status == BeacondStatus.authorizedWhenInUse)
        #expect(AuthorizationLevel(request: BeacondRequestKind.always) == .always)
        #expect(AuthorizationLevel(request: BeacondRequestKind.whenInUse).rawValue == "when-in-use")
    }
}

@Suite("beaconctl match rules")
struct MatchRuleTests {
    /// The bus parses every rule beaconctl adds (a typo there would break every live command).
    @Test(arguments: [SignalRules.adminEvents, SignalRules.locationManager, SignalRules.daemonOwnerChanged])
    func theBusAcceptsTheRule(rule: String) throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(.address(bus.address))
        try connection.addMatch(rule)
        #expect(rule.hasPrefix("type='signal',sender='"))
    }
}
