/// Checks of the names configuration files hold, so a typo is reported at load time and not as a
/// mysterious refusal later.
package enum ConfigurationNames {
    /// The administrator's folder of device keys in the configuration directory (`DeviceKeysParser` reads it).
    package static let devicesDirectory = "devices.d"

    /// Unix user and group names as systemd accepts them: ASCII letters, digits, `_`, `.`, `-` (not first), an
    /// optional trailing `$` (Samba machine accounts), at most 256 characters, and not all digits (a number
    /// would be read as a uid or gid by many tools).
    package static func isUnixName(_ name: String) -> Bool {
        let body = name.hasSuffix("$") ? name.dropLast() : name[...]
        guard let first = body.first, body.count <= 256, first != "-" else { return false }
        return body.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-") }
            && !body.allSatisfy(\.isNumber)
    }

    /// App ids are reverse-DNS-like (`org.example.BeaconDemo`): ASCII letters, digits, `.`, `-`, `_`, at most
    /// 255 characters, no empty component (no leading, trailing or doubled dot), not starting with `-`.
    package static func isAppID(_ appID: String) -> Bool {
        guard !appID.isEmpty, appID.count <= 255, appID.first != "-" else { return false }
        let valid = appID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
        return valid && !appID.split(separator: ".", omittingEmptySubsequences: false).contains { $0.isEmpty }
    }

    /// A D-Bus well-known bus name (D-Bus specification, "Valid Names"): at most 255 characters, two or more
    /// dot-separated elements of ASCII letters, digits, `_` and `-`, none empty or starting with a digit.
    /// Unique names (`:1.42`) are assigned by the bus, never configured.
    package static func isWellKnownBusName(_ name: String) -> Bool {
        guard name.utf8.count <= 255 else { return false }
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        return elements.count >= 2
            && elements.allSatisfy { element in
                guard let first = element.first, !(first.isASCII && first.isNumber) else { return false }
                return element.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            }
    }
}
