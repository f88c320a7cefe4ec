import BeacondService
import BeacondCore
import Foundation
import Testing

/// Names that cannot work on this system, and a configuration directory that is not there, are warnings (logged,
/// and in GetStatus Warnings) that name the file, the line and the fix.
@Suite("Configuration warnings about this system")
struct ConfigurationWarningsTests {
    static let app = """
        app_id = "org.example.Door"
        users = ["root", "beacond-no-such-user"]
        when_in_use_usage = "Shows the door."

        """

    @Test func aListedUserThatDoesNotExistIsAWarning() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(Self.app, to: "apps.d/door.toml")
        try directory.write("[authorization]\nadmin_group = \"root\"\n", to: "beacond.toml")
        let warnings = try ConfigurationLoader.load(directory: directory.path).warnings.map(\.description)
        #expect(warnings.count == 1, "\(warnings)")
        let warning = try #require(warnings.first)
        #expect(warning.hasPrefix(directory.path + "/apps.d/door.toml:2: "), "\(warning)")
        #expect(warning.contains("\"beacond-no-such-user\""), "\(warning)")
        #expect(warning.contains("does not exist"), "\(warning)")
        #expect(!warning.contains("\"root\""), "\(warning)")
    }

    @Test func anAdminGroupThatDoesNotExistIsAWarning() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[authorization]\nprompt = \"admin\"\nadmin_group = \"beacond-no-such-group\"\n", to: "beacond.toml")
        let warnings = try ConfigurationLoader.load(directory: directory.path).warnings.map(\.description)
        #expect(warnings.count == 1, "\(warnings)")
        let warning = try #require(warnings.first)
        #expect(warning.hasPrefix(directory.settingsFile + ":3: "), "\(warning)")
        #expect(warning.contains("\"beacond-no-such-group\""), "\(warning)")
        #expect(warning.contains("only root"), "\(warning)")
        #expect(warning.contains("groupadd"), "\(warning)")
    }

    /// Issue 21: without beacond.toml the default admin_group is checked as a written one is.
    @Test func aMissingSettingsFileWarnsOfAMissingDefaultAdminGroup() throws {
        let directory = try ConfigurationDirectory()
        let accounts = AccountLookup(userExists: { _ in true }, groupExists: { _ in false }, directoryExists: { _ in true })
        let warnings = try ConfigurationLoader.load(directory: directory.path, accounts: accounts).warnings.map(\.description)
        #expect(warnings.count == 1 && warnings.first?.hasPrefix(directory.settingsFile + ": admin_group") == true, "\(warnings)")
    }

    @Test func anExistingAdminGroupAndUsersGiveNoWarning() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(Self.app.replacingOccurrences(of: ", \"beacond-no-such-user\"", with: ""), to: "apps.d/door.toml")
        try directory.write("[authorization]\nadmin_group = \"root\"\n", to: "beacond.toml")
        #expect(try ConfigurationLoader.load(directory: directory.path).warnings.isEmpty)
    }

    @Test func aConfigurationDirectoryThatDoesNotExistIsAWarning() throws {
        let directory = try ConfigurationDirectory()
        let missing = directory.path + "/absent"
        let configuration = try ConfigurationLoader.load(directory: missing)
        let warning = try #require(
            configuration.warnings.map(\.description).first { $0.hasPrefix(missing + ": ") },
            "\(configuration.warnings)")
        #expect(warning.contains("does not exist"), "\(warning)")
        #expect(warning.contains("built-in defaults"), "\(warning)")
        #expect(warning.contains("--config-dir"), "\(warning)")
        #expect(configuration.apps.isEmpty)
    }

    /// Issue 39: a name both in devices.d and in an app's [devices], and one key under two names one app sees, were
    /// accepted silently. Each is a warning saying which wins; two apps naming one phone each are not warned about.
    @Test func devicesDeclaredTwiceAreWarningsThatSayWhichWins() throws {
        let directory = try ConfigurationDirectory()
        let phone = "irk:0c1d2e3f405162738495a6b7c8d9eafb"
        let tablet = "irk:00112233445566778899aabbccddeeff"
        try directory.write("[devices]\nphone = \"\(phone)\"\nalso-phone = \"\(phone)\"\n", to: "devices.d/admin.toml")
        try directory.write(
            "app_id = \"org.example.A\"\nusers = [\"root\"]\nalways_usage = \"x\"\n[devices]\nphone = \"\(tablet)\"\n", to: "apps.d/a.toml")
        try directory.write(
            "app_id = \"org.example.B\"\nusers = [\"root\"]\nalways_usage = \"x\"\n[devices]\nmine = \"\(tablet)\"\n", to: "apps.d/b.toml")
        let warnings = try directory.load().warnings.map(\.description)
        let both = warnings.filter { $0.contains("\"phone\" is declared both here and in") }
        #expect(both.count == 1 && both[0].contains("a.toml") && both[0].contains("for org.example.A this file's key wins"), "\(warnings)")
        let twice = warnings.filter { $0.contains("one key is declared under 2 names") }
        #expect(twice.count == 1 && twice[0].contains("also-phone") && twice[0].contains("phone ("), "\(warnings)")
        // A's "phone" (the tablet's key) and B's "mine" are one key in two apps: each app sees only its own.
        #expect(!warnings.contains { $0.contains("mine") }, "\(warnings)")
    }

    /// Issue 39: a dangling devices.d link silently dropped every administrator device (a dangling file link is an
    /// error); now both are errors. A devices.d that is a file is told to become a directory of device declarations.
    @Test func aDanglingDevicesDirectoryLinkIsAnErrorAndAFileSaysWhatItShouldHold() throws {
        let directory = try ConfigurationDirectory()
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/devices.d", withDestinationPath: "/nonexistent/devices")
        let dangling = try #require(directory.loadError())
        #expect(dangling.description.contains("devices.d: is a symbolic link to /nonexistent/devices, which does not exist"), "\(dangling)")
        try FileManager.default.removeItem(atPath: directory.path + "/devices.d")
        try directory.write("x = 1\n", to: "devices.d")
        let file = try #require(directory.loadError())
        #expect(file.description.contains("make it a directory of device declarations ([devices]) (*.toml)"), "\(file)")
    }
}
