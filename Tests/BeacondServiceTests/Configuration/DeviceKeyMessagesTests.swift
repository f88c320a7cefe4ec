import BeacondService
import BeacondCore
import Foundation
import TestKit
import Testing

/// A rejected key is never quoted back (issue 38): the message a start or a reload gives (the journal, `GetStatus`
/// `ConfigurationError`, `Admin1` `ConfigurationRejected`) names the file, the line, the device and what is wrong,
/// and holds no 8 characters in a row of the key, whichever format and file it was written in.
@Suite("a rejected Identity Resolving Key is never quoted back")
struct DeviceKeyMessagesTests {
    /// A key of no example (the documentation's sample key appears in the fixes messages give), most significant
    /// byte first.
    static let key = "5a17c3e8904b6df2e1a03c7b58d64f91"
    static let secrets = KeyLeaks.forms(ofHex: key, base64: ["kU/WWHs8oOHybUuQ6MMXWg==", "WhfD6JBLbfLhoDx7WNZPkQ=="])

    /// Broken keys in every format: one byte short, one byte long, one wrong digit; and what the message says.
    static let broken: [(String, String)] = [
        ("irk:5a17c3e8904b6df2e1a03c7b58d64f", "15 bytes"),
        ("irk:5a17c3e8904b6df2e1a03c7b58d64f9142", "17 bytes"),
        ("irk:5a17c3e8g04b6df2e1a03c7b58d64f91", "character 13"),
        ("5a17c3e8904b6df2e1a03c7b58d64f", "15 bytes"),
        ("5a:17:c3:e8:90:4b:6d:f2:e1:a0:3c:7b:58:d6:4f:91:42", "17 bytes"),
        ("bluez:914FD6587B3CA0E1F26D4B90E8C317", "15 bytes"),
        ("bluez:914FD6587B3CA0E1F26D4B90E8C3175A00", "17 bytes"),
        ("bluez:914FD6587B3CA0E1F26D4B9GE8C3175A@5C:F3:70:12:34:56", "character 30"),
        ("kU/WWHs8oOHybUuQ6MMX", "15 bytes"),
        ("kU/WWHs8oOHybUuQ6MMXWkI=", "17 bytes"),
        ("kU/WWHs8!OHybUuQ6MMXWg==", "character 9"),
    ]

    static func leak(_ message: String, _ text: String) -> String? {
        var written = String(text.split(separator: "@")[0])
        for prefix in ["irk:", "bluez:"] where written.hasPrefix(prefix) { written.removeFirst(prefix.count) }
        return KeyLeaks.repeated(in: message, of: secrets + [written])
    }

    @Test("in devices.d")
    func administratorsDevices() throws {
        for (text, said) in Self.broken {
            let directory = try ConfigurationDirectory()
            try directory.write("# Alice's phone\n[devices]\nalice-phone = \"\(text)\"\n", to: "devices.d/phones.toml")
            let message = try #require(directory.loadError(), "\(text) was accepted").description
            #expect(Self.leak(message, text) == nil, "\(text): \(message)")
            #expect(message.contains("devices.d/phones.toml:3") && message.contains("alice-phone"), "\(message)")
            #expect(message.contains(said), "\(text): \(message)")
        }
    }

    @Test("in an app's declaration")
    func appsDevices() throws {
        for (text, said) in Self.broken {
            let directory = try ConfigurationDirectory()
            try directory.write(
                "app_id = \"org.example.Demo\"\nusers = [\"root\"]\n\n[devices]\nalice-phone = \"\(text)\"\n",
                to: "apps.d/demo.toml")
            let message = try #require(directory.loadError(), "\(text) was accepted").description
            #expect(Self.leak(message, text) == nil, "\(text): \(message)")
            #expect(message.contains("apps.d/demo.toml:5") && message.contains("alice-phone"), "\(message)")
            #expect(message.contains(said), "\(text): \(message)")
        }
    }

    /// Not a string, a key written as the name, a key TOML cannot read: still never repeated.
    @Test("a key in the wrong place or of the wrong type")
    func wrongPlaceOrType() throws {
        let cases: [(String, String)] = [
            ("[devices]\nalice-phone = 1234567890123456\n", "alice-phone"),
            ("[devices]\nalice-phone = [\"irk:\(Self.key)\"]\n", "alice-phone"),
            ("[devices]\n\"irk:\(Self.key)\" = \"alice-phone\"\n", "not a device name"),
            ("[devices]\n\"\(Self.key.uppercased())\" = \"alice-phone\"\n", "not a device name"),
            ("[devices]\nalice-phone = 0x\(Self.key)\n", "TOML syntax error"),
            ("[devices]\nalice-phone = 0x\(Self.key.prefix(15))\n", "alice-phone"),
            ("[devices]\nalice-phone = 12345678901234567890123\n", "TOML syntax error"),
        ]
        // What TOML makes of a number: its decimal digits are the key's too.
        let numbers = ["1234567890123456", String(Int(Self.key.prefix(15), radix: 16) ?? 0)]
        for (text, said) in cases {
            let directory = try ConfigurationDirectory()
            try directory.write(text, to: "devices.d/phones.toml")
            let message = try #require(directory.loadError(), "\(text) was accepted").description
            #expect(KeyLeaks.repeated(in: message, of: Self.secrets + numbers) == nil, "\(text): \(message)")
            #expect(message.contains("devices.d/phones.toml:2") && message.contains(said), "\(text): \(message)")
        }
    }
}
