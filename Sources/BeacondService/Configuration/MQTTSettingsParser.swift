import BeaconKit
import Fleet
import BeacondCore
#if canImport(Glibc)
    import Glibc
#endif

/// Reads `[mqtt]` of beacond.toml. Files it names (password, CA, client certificate) are checked here, so a wrong
/// path is a configuration error with its line (exit 78 at start, the old settings kept on reload), not a broker
/// connection that keeps failing.
enum MQTTSettingsParser {
    /// `publish_interval`, seconds: a tenth of a second to an hour.
    static let publishIntervalRange = 0.1...3600.0
    /// `rssi_offset`, dB: receivers differ by 10 to 20 dB; beyond ±50 it is a mistake.
    static let rssiOffsetRange = -50.0...50.0

    static func read(_ section: inout TOMLTableReader) throws(ConfigurationError) -> MQTTSettings {
        var settings = MQTTSettings.defaults
        if let text = try section.string("broker", example: "mqtt://127.0.0.1:1883"), !text.isEmpty {
            do throws(MQTTSettings.BrokerError) {
                settings.broker = try MQTTSettings.Broker(parsing: text)
            } catch {
                throw section.error(
                    "broker", "broker = \(error.message)",
                    fix: "write e.g. broker = \"mqtt://192.0.2.10:1883\" or \"mqtts://broker.example:8883\"; "
                        + "\"\" turns MQTT off")
            }
        }
        if let room = try section.string("room", example: "kitchen") {
            guard room.isEmpty || !ESPresense.roomSlug(room).isEmpty else {
                throw section.error(
                    "room", "room = \"\(room)\" has no letter or digit, so it makes no topic name",
                    fix: "name the room in letters and digits, e.g. room = \"living room\" (published as living_room)")
            }
            settings.room = room
        }
        settings.username = try section.string("username", example: "beacond") ?? ""
        if let file = try section.string("password_file", example: "/run/credentials/beacond.service/mqtt-password"),
            !file.isEmpty
        {
            settings.passwordFile = file
            settings.password = try readPassword(file, section: section)
        }
        for key in ["ca_file", "client_certificate", "client_key"] {
            guard let file = try section.string(key, example: "/etc/beacond/mqtt-ca.crt"), !file.isEmpty else { continue }
            guard access(file, R_OK) == 0 else {
                throw section.error(
                    key, "\(key) = \"\(file)\" cannot be read: \(String(cString: strerror(errno)))",
                    fix: "name a PEM file that user beacond can read")
            }
            switch key {
            case "ca_file": settings.caFile = file
            case "client_certificate": settings.clientCertificate = file
            default: settings.clientKey = file
            }
        }
        if settings.clientCertificate.isEmpty != settings.clientKey.isEmpty {
            let key = settings.clientCertificate.isEmpty ? "client_key" : "client_certificate"
            throw section.error(
                key, "client_certificate and client_key go together",
                fix: "set both (the certificate and its private key) or neither")
        }
        if let broker = settings.broker, !broker.useTLS,
            !(settings.caFile + settings.clientCertificate).isEmpty
        {
            let key = settings.caFile.isEmpty ? "client_certificate" : "ca_file"
            throw section.error(
                key, "\(key) is set but broker = \"\(broker)\" does not use TLS",
                fix: "write the broker as mqtts://\(broker.host):8883 (or the broker's TLS port)")
        }
        if let text = try section.string("protocol", example: "5") {
            guard let version = MQTTSettings.ProtocolVersion(rawValue: text) else {
                throw section.error(
                    "protocol", "protocol = \"\(text)\" is not an MQTT version beacond speaks",
                    fix: "write protocol = \"5\" (default; refused publications are reported) or \"3.1.1\"")
            }
            settings.protocolVersion = version
        }
        if let entries = try section.stringArray("publish", example: "[\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1\"]") {
            settings.publish = try publication(entries, section: section)
        }
        if let subscribe = try section.bool("subscribe") { settings.subscribe = subscribe }
        if let seconds = try section.number("publish_interval", example: "1") {
            guard publishIntervalRange.contains(seconds) else {
                throw section.error(
                    "publish_interval", "publish_interval = \(seconds) is out of range",
                    fix: "write the seconds between two readings of one beacon, 0.1 to 3600, e.g. publish_interval = 1")
            }
            settings.publishInterval = .microseconds(Int64((seconds * 1_000_000).rounded()))
        }
        if let offset = try section.number("rssi_offset", example: "0") {
            guard rssiOffsetRange.contains(offset) else {
                throw section.error(
                    "rssi_offset", "rssi_offset = \(offset) is out of range",
                    fix: "write the dB this receiver reads too low (positive) or too high (negative), "
                        + "-50 to 50, e.g. rssi_offset = 6")
            }
            settings.rssiOffset = offset
        }
        if let enabled = try section.bool("homeassistant") { settings.homeAssistant = enabled }
        if let prefix = try section.string("discovery_prefix", example: "homeassistant") {
            guard !prefix.isEmpty, !prefix.contains(where: { "+#".contains($0) || $0.isNewline }),
                !prefix.hasPrefix("/"), !prefix.hasSuffix("/")
            else {
                throw section.error(
                    "discovery_prefix", "discovery_prefix = \"\(prefix)\" is not a topic prefix",
                    fix: "write Home Assistant's discovery prefix, e.g. discovery_prefix = \"homeassistant\" "
                        + "(no + or #, no / at either end)")
            }
            settings.discoveryPrefix = prefix
        }
        return settings
    }

    private static func publication(_ entries: [String], section: TOMLTableReader) throws(ConfigurationError)
        -> MQTTSettings.Publication
    {
        if entries.contains("*") {
            guard entries == ["*"] else {
                throw section.error(
                    "publish", "publish holds \"*\" beside other entries",
                    fix: "write publish = [\"*\"] for every beacon heard, or list the beacons without \"*\"")
            }
            return .all
        }
        var constraints: [BeaconIdentityConstraint] = []
        for (index, entry) in entries.enumerated() {
            do throws(BeaconIdentityConstraint.Invalid) {
                constraints.append(try BeaconIdentityConstraint(parsing: entry))
            } catch {
                throw section.error(
                    "publish",
                    "element \(index + 1) of publish, \"\(entry)\", is not UUID[:MAJOR[:MINOR]] "
                        + "(or altbeacon:…, eddystone:…, device:NAME) or \"*\" (\(error))",
                    fix: "write e.g. publish = [\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1\"] (major and minor in decimal); "
                        + "docs/devices.md lists each kind's form")
            }
        }
        return .only(constraints)
    }

    /// The first line of the file, as systemd's `LoadCredential=` and `echo secret > file` leave it.
    private static func readPassword(_ file: String, section: TOMLTableReader) throws(ConfigurationError) -> String {
        guard let handle = fopen(file, "r") else {
            throw section.error(
                "password_file", "password_file = \"\(file)\" cannot be read: \(String(cString: strerror(errno)))",
                fix: "name a file that user beacond can read, e.g. one passed with systemd's "
                    + "LoadCredential=mqtt-password:/etc/beacond/mqtt-password and written "
                    + "password_file = \"/run/credentials/beacond.service/mqtt-password\"")
        }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        while bytes.count <= 4096 {
            let byte = fgetc(handle)
            guard byte != EOF, byte != 0x0A else { break }
            bytes.append(UInt8(byte))
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard bytes.count <= 4096 else {
            throw section.error(
                "password_file", "password_file = \"\(file)\" is longer than 4096 bytes on its first line",
                fix: "put only the password in the file")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
