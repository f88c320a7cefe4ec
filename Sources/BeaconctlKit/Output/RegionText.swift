public import DBus
import BeacondAPI

/// Regions, constraints and beacons as people read them: `UUID[:MAJOR[:MINOR]]`, the form the CLI takes.
public enum RegionText {
    /// `E2C56DB5-…:1:2` from a region or constraint dictionary; other kinds in their text form (docs/devices.md):
    /// `altbeacon:…`, `eddystone:NAMESPACE[:INSTANCE]`, `device:NAME`.
    public static func constraint(_ dictionary: VarDict) -> String {
        switch dictionary.string(BeacondKey.kind) {
        case "Eddystone":
            return "eddystone:\(dictionary.string(BeacondKey.namespace) ?? "?")"
                + (dictionary.string(BeacondKey.instance).map { ":" + $0 } ?? "")
        case "PrivateDevice":
            return "device:\(dictionary.string(BeacondKey.device) ?? "?")"
        case "AltBeacon":
            return "altbeacon:" + numbered(dictionary)
        case let other?:
            return "\(other.lowercased()):?"
        case nil:
            return numbered(dictionary)
        }
    }

    /// `UUID[:MAJOR[:MINOR]]`.
    static func numbered(_ dictionary: VarDict) -> String {
        var text = dictionary.string(BeacondKey.uuid) ?? "?"
        if let major = dictionary.integer(BeacondKey.major) {
            text += ":\(major)"
            if let minor = dictionary.integer(BeacondKey.minor) { text += ":\(minor)" }
        }
        return text
    }

    /// A ranged beacon's name: `UUID` for an iBeacon (its numbers follow), the text form for other kinds.
    public static func beacon(_ dictionary: VarDict) -> String {
        dictionary.string(BeacondKey.kind) == nil ? dictionary.string(BeacondKey.uuid) ?? "?" : constraint(dictionary)
    }

    /// `lobby (E2C56DB5-…:1)`, or just the constraint when there is no identifier.
    public static func region(_ dictionary: VarDict) -> String {
        guard let identifier = dictionary.string(BeacondKey.identifier) else { return constraint(dictionary) }
        return "\(identifier) (\(constraint(dictionary)))"
    }

    /// Accuracy in metres with two decimals, "unknown" for the API's −1.
    public static func accuracy(_ metres: Double?) -> String {
        guard let metres, metres >= 0 else { return "unknown" }
        let hundredths = Int64((metres * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    public static func yesNo(_ value: Bool?) -> String {
        value.map { $0 ? "yes" : "no" } ?? "?"
    }

    /// A value in a `key=value` list: strings bare, containers as JSON.
    public static func compact(_ value: DBusValue) -> String {
        if let text = value.stringValue { return text }
        return JSON(value).text
    }
}
