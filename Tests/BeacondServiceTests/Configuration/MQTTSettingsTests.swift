import BeaconKit
import BeacondService
import BeacondCore
import Foundation
import Testing

@Suite("[mqtt] settings")
struct MQTTSettingsTests {
    private func load(_ text: String, files: [String: String] = [:]) throws -> (
        Result<DaemonConfiguration, ConfigurationError>, ConfigurationDirectory
    ) {
        let directory = try ConfigurationDirectory()
        for (name, content) in files { try directory.write(content, to: name) }
        try directory.write(text.replacingOccurrences(of: "$DIR", with: directory.path), to: "beacond.toml")
        return (Result { () throws(ConfigurationError) in try directory.load() }, directory)
    }

    @Test func offByDefaultAndNothingIsPublished() throws {
        let (result, _) = try load("")
        let settings = try result.get().mqtt
        #expect(settings == .defaults)
        #expect(settings.broker == nil && !settings.publishes && settings.publish.isEmpty)
        #expect(settings.protocolVersion == .v5 && settings.publishInterval == .seconds(1) && settings.rssiOffset == 0)
    }

    @Test func everyKeyIsRead() throws {
        let (result, directory) = try load(
            """
            [mqtt]
            broker = "mqtts://[::1]:8884"
            room = "Living Room"
            username = "node"
            password_file = "$DIR/password"
            ca_file = "$DIR/ca.crt"
            client_certificate = "$DIR/node.crt"
            client_key = "$DIR/node.key"
            protocol = "3.1.1"
            publish = ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1", "74278BDA-B644-4520-8F0C-720EAF059935:5:7"]
            subscribe = false
            publish_interval = 2.5
            rssi_offset = -6
            homeassistant = true
            discovery_prefix = "ha/discovery"
            """, files: ["password": "s3cret\nsecond line ignored\n", "ca.crt": "x", "node.crt": "x", "node.key": "x"])
        let settings = try result.get().mqtt
        #expect(settings.broker == MQTTSettings.Broker(useTLS: true, host: "::1", port: 8884))
        #expect(settings.broker?.description == "mqtts://[::1]:8884")
        #expect(settings.room == "Living Room" && settings.username == "node")
        #expect(settings.passwordFile == directory.path + "/password" && settings.password == "s3cret")
        #expect(settings.caFile == directory.path + "/ca.crt" && settings.clientKey == directory.path + "/node.key")
        #expect(!settings.subscribe && MQTTSettings.defaults.subscribe)
        #expect(settings.homeAssistant && settings.discoveryPrefix == "ha/discovery" && !MQTTSettings.defaults.homeAssistant)
        #expect(settings.protocolVersion == .v311 && settings.publishInterval == .milliseconds(2500) && settings.rssiOffset == -6)
        let one = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 9)
        let other = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 2, minor: 9)
        #expect(settings.publish.includes(one) && !settings.publish.includes(other) && settings.publishes)
    }

    @Test func brokerURLs() throws {
        #expect(try MQTTSettings.Broker(parsing: "mqtt://broker.lan") == .init(useTLS: false, host: "broker.lan", port: 1883))
        #expect(try MQTTSettings.Broker(parsing: "mqtts://broker.lan") == .init(useTLS: true, host: "broker.lan", port: 8883))
        #expect(try MQTTSettings.Broker(parsing: "mqtt://10.0.0.2:1884").port == 1884)
        for bad in [
            "tcp://x", "broker.lan", "mqtt://", "mqtt://user:pw@x", "mqtt://x/path", "mqtt://x:0", "mqtt://x:99999",
            "mqtt://x:port", "mqtt://[::1", "mqtt://[::1]x",
        ] {
            #expect(throws: MQTTSettings.BrokerError.self, "\(bad)") { try MQTTSettings.Broker(parsing: bad) }
        }
    }

    @Test(arguments: [
        ("broker = \"tcp://x\"", "broker = \"tcp://x\" does not start with mqtt:// or mqtts://"),
        ("broker = \"mqtt://u:p@x\"", "holds credentials"),
        ("room = \"///\"", "has no letter or digit"),
        ("password_file = \"/nonexistent/pw\"", "password_file = \"/nonexistent/pw\" cannot be read: No such file or directory"),
        ("ca_file = \"/nonexistent/ca.crt\"", "ca_file = \"/nonexistent/ca.crt\" cannot be read"),
        ("protocol = \"4\"", "protocol = \"4\" is not an MQTT version"),
        ("publish = [\"*\", \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\"]", "\"*\" beside other entries"),
        ("publish = [\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:x\"]", "element 1 of publish"),
        ("publish = \"*\"", "must be an array of strings"),
        ("publish_interval = 0", "publish_interval = 0.0 is out of range"),
        ("rssi_offset = 99", "rssi_offset = 99.0 is out of range"),
        ("discovery_prefix = \"home/#\"", "is not a topic prefix"),
    ])
    func badValuesNameTheFileLineAndFix(line: String, message: String) throws {
        // The key under test is on line 4 whatever it is.
        let broker = line.hasPrefix("broker") ? "" : "broker = \"mqtt://127.0.0.1\""
        let (result, directory) = try load("[mqtt]\n\(broker)\n\n\(line)\n")
        guard case .failure(let error) = result else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(error.file == directory.settingsFile)
        #expect(error.line == 4, "\(error)")
        #expect(error.description.contains(message), "\(error)")
        #expect(error.fix != nil)
    }

    @Test func tlsFilesNeedAnMqttsBrokerAndACertificateNeedsItsKey() throws {
        let (plain, _) = try load("[mqtt]\nbroker = \"mqtt://x\"\nca_file = \"$DIR/ca.crt\"\n", files: ["ca.crt": "x"])
        #expect(throws: ConfigurationError.self) { try plain.get() }
        let (half, _) = try load("[mqtt]\nbroker = \"mqtts://x\"\nclient_certificate = \"$DIR/c.crt\"\n", files: ["c.crt": "x"])
        if case .failure(let error) = half { #expect(error.description.contains("go together")) } else { Issue.record("accepted") }
    }

    @Test func aKeyOfAnotherSectionIsAWarningNotAnError() throws {
        let (result, _) = try load("[mqtt]\nbroker = \"mqtt://x\"\nexit_timeout = 5\nsubscribe = true\n")
        #expect(try result.get().mqtt.subscribe)
        let warnings = try result.get().warnings.map(\.description)
        #expect(warnings.contains { $0.contains("exit_timeout") && $0.contains("is ignored") }, "\(warnings)")
        #expect(warnings.count == 1, "only exit_timeout is unknown here: \(warnings)")
    }
}
