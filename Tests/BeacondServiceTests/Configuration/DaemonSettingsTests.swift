import BeaconKit
import BeacondService
import BeacondCore
import Testing

@Suite("beacond.toml")
struct DaemonSettingsTests {
    @Test("an empty directory gives the defaults, no apps and no warnings")
    func emptyDirectory() throws {
        let directory = try ConfigurationDirectory()
        var expected = DaemonConfiguration.defaults
        expected.configFile = directory.settingsFile
        #expect(try directory.load() == expected)
    }

    @Test("a directory that does not exist gives the defaults")
    func missingDirectory() throws {
        let directory = try ConfigurationDirectory()
        let configuration = try ConfigurationLoader.load(directory: directory.path + "/absent")
        #expect(configuration.apps.isEmpty)
        #expect(configuration.prompt == .admin)
    }

    @Test("the defaults are the documented values")
    func defaults() throws {
        let defaults = DaemonConfiguration.defaults
        #expect(defaults.locationServicesEnabled)
        #expect(defaults.prompt == .admin)
        #expect(defaults.adminGroup == "beacond-admin")
        #expect(defaults.exitTimeout == .seconds(30))
        #expect(defaults.maxRegionsPerClient == 20)
        #expect(defaults.scanner == .auto)
        #expect(defaults.apps.isEmpty)
        #expect(defaults.warnings.isEmpty)
        #expect(defaults.policy == AuthorizationPolicy())
        #expect(try defaults.monitoringConfiguration() == .default)
    }

    @Test("every key is read")
    func everyKey() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(
            """
            [authorization]
            location_services = false
            prompt = "when-in-use"
            admin_group = "wheel"

            [monitoring]
            exit_timeout = 12.5
            max_regions_per_client = 100

            [background]
            queue_limit = 50
            queue_ttl = 3600
            activation_interval = 5

            [scanner]
            source = "fifo:/run/beacond/test.fifo"
            """, to: "beacond.toml")
        let configuration = try directory.load()
        #expect(!configuration.locationServicesEnabled)
        #expect(configuration.prompt == .whenInUse)
        #expect(configuration.adminGroup == "wheel")
        #expect(configuration.exitTimeout == .milliseconds(12_500))
        #expect(configuration.maxRegionsPerClient == 100)
        #expect(configuration.queueLimit == 50)
        #expect(configuration.queueTTL == .seconds(3600))
        #expect(configuration.activationInterval == .seconds(5))
        #expect(configuration.scanner == .fifo(path: "/run/beacond/test.fifo"))
        #expect(configuration.warnings.isEmpty)
        #expect(
            configuration.policy
                == AuthorizationPolicy(
                    locationServicesEnabled: false, prompt: .whenInUse,
                    configFile: directory.settingsFile))
    }

    @Test("every prompt value", arguments: AuthorizationPrompt.allCases)
    func prompts(_ prompt: AuthorizationPrompt) throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[authorization]\nprompt = \"\(prompt.rawValue)\"\n", to: "beacond.toml")
        #expect(try directory.load().prompt == prompt)
    }

    @Test("an integer exit_timeout, and dotted keys at the top level")
    func integerTimeoutAndDottedKeys() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(
            "monitoring.exit_timeout = 45\nscanner = { source = \"hci:hci1\" }\n",
            to: "beacond.toml")
        let configuration = try directory.load()
        #expect(configuration.exitTimeout == .seconds(45))
        #expect(configuration.scanner == .hci(adapter: "hci1"))
    }

    @Test("a key left out keeps its default")
    func partialFile() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[monitoring]\nmax_regions_per_client = 5\n", to: "beacond.toml")
        let configuration = try directory.load()
        #expect(configuration.maxRegionsPerClient == 5)
        #expect(configuration.exitTimeout == .seconds(30))
        #expect(configuration.prompt == .admin)
    }

    @Test("unknown sections and keys are warnings with their lines, not errors")
    func unknownKeys() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(
            """
            # comment
            [authorization]
            promt = "deny"
            prompt = "deny"

            [logging]
            level = "debug"

            [monitoring]
            exit_timeout = 10
            """, to: "beacond.toml")
        let configuration = try directory.load()
        #expect(configuration.prompt == .deny)
        #expect(configuration.exitTimeout == .seconds(10))
        let warnings = configuration.warnings.map(\.description)
        #expect(warnings.count == 2)
        #expect(
            warnings.first?.hasPrefix("\(directory.settingsFile):3: unknown key \"promt\" in [authorization]")
                == true)
        #expect(warnings.first?.contains("did you mean \"prompt\"?") == true)
        #expect(warnings.last?.hasPrefix("\(directory.settingsFile):6: unknown section [logging] is ignored") == true)
        #expect(configuration.warnings.first?.line == 3)
    }
}

/// `[monitoring] enter_rssi` and `absent_rssi`: the RSSI hysteresis of regions that bring none.
@Suite("beacond.toml RSSI hysteresis")
struct HysteresisSettingsTests {
    func load(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        let directory = try! ConfigurationDirectory()
        try! directory.write(text, to: "beacond.toml")
        return try directory.load()
    }

    func error(_ text: String) -> String? {
        do {
            _ = try load(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func bothKeysSetTheDefaultHysteresis() throws {
        let configuration = try load("[monitoring]\nenter_rssi = -70\nabsent_rssi = -80\n")
        let expected = try RSSIHysteresis(enterAtOrAbove: -70, absentBelow: -80)
        #expect(configuration.hysteresis == expected)
        #expect(try configuration.monitoringConfiguration().hysteresis == expected)
        #expect(configuration.warnings.isEmpty)
        #expect(DaemonConfiguration.defaults.hysteresis == nil)
    }

    @Test func refusesWhatCannotWork() {
        #expect(error("[monitoring]\nenter_rssi = -70\n")?.contains("absent_rssi") == true)
        #expect(error("[monitoring]\nabsent_rssi = -70\n")?.contains("enter_rssi") == true)
        #expect(error("[monitoring]\nenter_rssi = -90\nabsent_rssi = -80\n")?.contains("at least") == true)
        #expect(error("[monitoring]\nenter_rssi = 30\nabsent_rssi = -80\n")?.contains("-127") == true)
        #expect(error("[monitoring]\nenter_rssi = -70\nabsent_rssi = -80\n") == nil)
    }
}
