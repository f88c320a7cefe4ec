import DBus
import BeacondAPI

/// A JSON value with a deterministic writer (keys sorted, no spaces), so `--json` output is stable and
/// scripts and tests can compare it. Foundation's serializer is not used: its number formatting differs
/// between platforms.
public indirect enum JSON: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    /// One line of JSON text.
    public var text: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .uint(let value): output += String(value)
        case .double(let value):
            // JSON has no NaN or infinity.
            guard value.isFinite else { output += "null"; return }
            if value == value.rounded(), abs(value) < 1e15 {
                output += String(Int64(value))
            } else {
                output += "\(value)"
            }
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                Self.writeString(key, to: &output)
                output += ":"
                members[key]?.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        JSONString.append(value, to: &output)
    }
}
