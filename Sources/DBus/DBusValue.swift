/// A D-Bus value with its type, as the wire format carries it (D-Bus Specification, "Type System").
///
/// Containers say their element types even when empty, because an empty `a{sv}` and an empty `as`
/// are different on the wire.
public indirect enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `a` + element signature; every element must have that signature.
    case array(elementSignature: String, [DBusValue])
    /// `a{kv}`: keys are basic types; entries keep their order.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictionaryEntry])
    /// `(…)`.
    case structure([DBusValue])
    /// `v`: a value that carries its own signature.
    case variant(DBusValue)

    /// The value's type signature, e.g. `a{sv}`.
    public var signature: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .array(let element, _): return "a" + element
        case .dictionary(let key, let value, _): return "a{" + key + value + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        }
    }

    /// `a{sv}` from a Swift dictionary, keys sorted so messages are reproducible.
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            entries.keys.sorted().compactMap { key in
                entries[key].map { DBusDictionaryEntry(key: .string(key), value: .variant($0)) }
            })
    }
}

public struct DBusDictionaryEntry: Hashable, Sendable {
    public var key: DBusValue
    public var value: DBusValue

    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// The payload of `a{sv}` as a Swift dictionary (variants unwrapped); nil for anything else.
    /// Duplicate keys keep the last, as most D-Bus bindings do.
    public var vardictEntries: [String: DBusValue]? {
        guard case .dictionary("s", "v", let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let value) = entry.value else { return nil }
            result[key] = value
        }
        return result
    }
}
