import BeaconKit
import BeacondService
import BeacondCore
import Foundation
import Testing

/// The files under config/ are what `make install` puts in /etc/beacond: they must load cleanly and say exactly
/// what the code's defaults are.
@Suite("shipped config/")
struct ShippedConfigurationTests {
    /// The repository's config/ folder, found from this file's path.
    private static let shippedDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config").path

    private static var exampleApp: AppConfiguration {
        AppConfiguration(
            declaration: AppDeclaration(
                appID: "org.example.BeaconDemo",
                whenInUseUsageDescription: "Shows the beacons around you while the demo window is open.",
                alwaysUsageDescription: "Tells you when you enter or leave the demo area, even when the demo is closed.",
                users: [], executable: nil, declarationFile: shippedDirectory + "/apps.d/example.toml"))
    }

    @Test("config/ loads as the defaults plus the example app, with no warnings")
    func shippedIsDefaults() throws {
        var expected = DaemonConfiguration.defaults
        expected.configFile = Self.shippedDirectory + "/beacond.toml"
        expected.apps = ["org.example.BeaconDemo": Self.exampleApp]
        #expect(try ConfigurationLoader.load(directory: Self.shippedDirectory, accounts: .everything) == expected)
    }

    @Test("uncommenting every commented key of beacond.toml changes nothing: the comments show the defaults")
    func commentedValuesAreDefaults() throws {
        let shipped = try String(contentsOfFile: Self.shippedDirectory + "/beacond.toml", encoding: .utf8)
        // `#key = value` lines are the commented-out settings; prose comments have a space after `#`.
        let commented = try Regex(#"^#([a-z_]+) = "#).anchorsMatchLineEndings()
        var uncommented: [String] = []
        var keys: [String] = []
        for line in shipped.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.firstMatch(of: commented), let key = match.output[1].substring {
                keys.append(String(key))
                uncommented.append(String(line.dropFirst()))
            } else {
                uncommented.append(String(line))
            }
        }
        #expect(
            keys == [
                "location_services", "prompt", "admin_group", "exit_timeout", "exit_timeout_min", "exit_chance",
                "max_regions_per_client", "max_regions_per_app", "margin", "dwell",
                "queue_limit", "queue_ttl", "activation_interval", "max_clients_per_app", "max_clients_per_user",
                "source", "broker", "room", "username", "password_file", "ca_file", "client_certificate",
                "client_key", "protocol", "publish", "subscribe", "publish_interval", "rssi_offset",
                "homeassistant", "discovery_prefix",
            ])
        let directory = try ConfigurationDirectory()
        try directory.write(uncommented.joined(separator: "\n"), to: "beacond.toml")
        var expected = DaemonConfiguration.defaults
        expected.configFile = directory.settingsFile
        #expect(try directory.load() == expected)
    }

    @Test("the example app's commented keys are valid too")
    func exampleCommentedKeysAreValid() throws {
        let shipped = try String(contentsOfFile: Self.shippedDirectory + "/apps.d/example.toml", encoding: .utf8)
        let uncommented = shipped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#") && !line.hasPrefix("# ") && line != "#" ? String(line.dropFirst()) : String(line)
        }
        let directory = try ConfigurationDirectory()
        try directory.write(uncommented.joined(separator: "\n"), to: "apps.d/example.toml")
        let configuration = try directory.load()
        let app = try #require(configuration.apps["org.example.BeaconDemo"])
        #expect(app.declaration.executable != nil)
        #expect(app.dbusName != nil)
        #expect(configuration.warnings.isEmpty)
    }
}
