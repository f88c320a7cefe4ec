import BeacondService
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
}
