import BeaconKit
import Foundation
import BeacondCore

/// Reads a `[devices]` table: private devices by name, each with its Identity Resolving Key in one of the formats
/// `IdentityResolvingKey(parsing:)` takes. In an app's declaration (`apps.d/*.toml`) the devices are that app's alone;
/// in `devices.d/*.toml` (where `beaconctl devices import` writes) they are the administrator's, for every app.
///
/// ```toml
/// [devices]
/// alice-phone = "irk:ec0234a357c8ad05341010a60a397d9b"
/// bob-pixel = "bluez:9B7D390AA610103405ADC857A33402EC"
/// ```
enum DeviceKeysParser {
    /// The administrator's folder of device keys in the configuration directory.
    static let directoryName = ConfigurationNames.devicesDirectory

    /// Every refusal names the file, the line, the device and what is wrong, never the key (`IdentityResolvingKey.Invalid`):
    /// neither the value nor a name that may be a key written in the wrong place.
    static func parse(_ root: inout TOMLTableReader) throws(ConfigurationError) -> [String: IdentityResolvingKey] {
        guard var table = try root.table("devices") else { return [:] }
        var devices: [String: IdentityResolvingKey] = [:]
        for name in table.table.keys.sorted() {
            guard BeaconIdentityConstraint.isDeviceName(name) else {
                throw table.error(
                    name, "[devices]: the name on this line is not a device name: \(whyNotADeviceName(name))",
                    fix: "name it with 1-64 of a-z, 0-9, '_' and '-' (no 8 hex digits in a row), e.g. alice-phone = \"irk:...\"")
            }
            let device = IdentityResolvingKey.mayHoldKey(name) ? "the device on this line" : name
            guard
                let text = try table.secretString(
                    name, subject: "[devices] \(device)", example: "irk:ec0234a357c8ad05341010a60a397d9b")
            else { continue }
            do {
                devices[name] = try IdentityResolvingKey(parsing: text)
            } catch {
                throw table.error(name, "[devices] \(device): \(error)", fix: "see docs/devices.md for where each format comes from")
            }
        }
        return devices
    }

    /// What makes `name` no device name, without repeating it (it may be a key written where the name goes).
    static func whyNotADeviceName(_ name: String) -> String {
        if name.isEmpty { return "it is empty" }
        if name.utf8.count > 64 { return "it is \(name.utf8.count) bytes long, more than 64" }
        for (index, character) in name.enumerated() where !BeaconIdentityConstraint.isDeviceName(String(character)) {
            let what = character.isUppercase ? "an uppercase letter" : character == " " ? "a space" : "not a-z, 0-9, '_' or '-'"
            return "character \(index + 1) is \(what)"
        }
        if BeaconIdentityConstraint.looksLikeKey(name) {
            return "it has 8 hex digits in a row, so it could be (part of) a key, and a name is shown in logs and to apps"
        }
        return "it is not a-z, 0-9, '_' and '-'"
    }

    /// Every `devices.d/*.toml`: `[devices]` tables, one name declared once.
    /// Every broken file is reported (the first thrown, the others in its `others`), not only the first.
    static func loadAdministratorDevices(directory: String, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
        var declaredIn: [String: String] = [:]
        var problems: [ConfigurationError] = []
        for file in try ConfigurationFiles.declarationFiles(in: directory, holding: "device declarations ([devices])") {
            do throws(ConfigurationError) {
                guard let text = try ConfigurationFiles.readIfPresent(file) else { continue }
                let document = try TOMLDocument(file: file, text: text)
                var root = document.rootReader
                let devices = try parse(&root)
                for (name, key) in devices.sorted(by: { $0.key < $1.key }) {
                    if let first = declaredIn[name] {
                        throw ConfigurationError(
                            file: file, line: document.keyLines.line(of: ["devices", name]),
                            message: "device \"\(name)\" is already declared in \(first)",
                            fix: "declare each device once: remove one, or rename it")
                    }
                    declaredIn[name] = file
                    configuration.devices[name] = key
                }
                configuration.warnings += root.unknownKeyWarnings()
                if let warning = exposureWarning(file) { configuration.warnings.append(warning) }
            } catch {
                problems.append(error)
            }
        }
        if var first = problems.first {
            first.others = Array(problems.dropFirst())
            throw first
        }
    }

    /// A file holding keys that any local user can read: another app's user could read its keys.
    static func exposureWarning(_ file: String) -> ConfigurationDiagnostic? {
        var status = stat()
        guard stat(file, &status) == 0, status.st_mode & 0o004 != 0 else { return nil }
        return ConfigurationDiagnostic(
            file: file, line: nil,
            message: "holds Identity Resolving Keys and every local user may read it, so any app's user could learn "
                + "them. Fix: chown root:beacond \(file) && chmod 0640 \(file)")
    }
}
