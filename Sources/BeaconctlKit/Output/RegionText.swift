public import DBus
import BeacondAPI

/// Regions, constraints and beacons as people read them: `UUID[:MAJOR[:MINOR]]`, the form the CLI takes.
public enum RegionText {
    /// `E2C56DB5-…:1:2` from a region or constraint dictionary.
    public static func constraint(_ dictionary: VarDict) -> String {
        var text = dictionary.string(BeacondKey.uuid) ?? "?"
        if let major = dictionary.integer(BeacondKey.major) {
            text += ":\(major)"
            if let minor = dictionary.integer(BeacondKey.minor) { text += ":\(minor)" }
        }
        return text
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
