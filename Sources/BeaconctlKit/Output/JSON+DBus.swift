public import DBus
import BeacondAPI
import BeaconKit

extension JSON {
    /// Keys whose `t` values are µs since the Unix epoch; each gets a sibling `<Key>ISO8601` string
    /// (null when 0, which the API uses for "never").
    public static let timestampKeys: Set<String> = [
        BeacondKey.timestamp, BeacondRegionStatusKey.lastSeen, BeacondStatusKey.startedAt, BeacondEventKey.timestamp,
    ]
    public static let isoSuffix = "ISO8601"

    /// A D-Bus value as JSON: integers as numbers, object paths and signatures as strings, variants
    /// unwrapped, structures as arrays, dictionaries with string keys as objects (other keys as their text).
    public init(_ value: DBusValue) {
        switch value {
        case .byte(let v): self = .int(Int64(v))
        case .boolean(let v): self = .bool(v)
        case .int16(let v): self = .int(Int64(v))
        case .uint16(let v): self = .int(Int64(v))
        case .int32(let v): self = .int(Int64(v))
        case .uint32(let v): self = .int(Int64(v))
        case .int64(let v): self = .int(v)
        case .uint64(let v): self = .uint(v)
        case .double(let v): self = .double(v)
        case .string(let v), .objectPath(let v), .signature(let v): self = .string(v)
        case .array(_, let elements): self = .array(elements.map(JSON.init))
        case .structure(let fields): self = .array(fields.map(JSON.init))
        case .variant(let inner): self = JSON(inner)
        case .dictionary(_, _, let entries):
            var members: [String: DBusValue] = [:]
            for entry in entries {
                let key = entry.key.stringValue ?? JSON(entry.key).text
                members[key] = entry.value
            }
            self = JSON(members)
        }
    }

    /// A dictionary from beacond, with ISO-8601 siblings for timestamps.
    public init(_ dictionary: VarDict) {
        var members: [String: JSON] = [:]
        for (key, value) in dictionary {
            members[key] = JSON(value)
            if Self.timestampKeys.contains(key), let micros = value.integerValue {
                members[key + Self.isoSuffix] =
                    micros == 0
                    ? .null : .string(Timestamp(microsecondsSinceEpoch: micros).iso8601)
            }
        }
        self = .object(members)
    }

    public init(_ dictionaries: [VarDict]) {
        self = .array(dictionaries.map(JSON.init))
    }
}
