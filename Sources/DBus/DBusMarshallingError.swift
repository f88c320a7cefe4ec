/// Why a value could not be written to or read from a message. Never a trap: values come from
/// clients on the bus and from configuration, and libdbus aborts on some invalid input (a string
/// with a NUL, a malformed object path), so everything is checked before libdbus sees it.
public enum DBusMarshallingError: Error, Hashable, Sendable, CustomStringConvertible {
    case stringContainsNUL
    case invalidObjectPath(String)
    case invalidSignature(String)
    /// An interface, member or bus name that is not valid (`kind` says which).
    case invalidName(String, kind: String)
    /// An element, key or value whose type is not the container's declared one.
    case elementTypeMismatch(expected: String, found: String)
    /// Dictionary keys must be basic types (D-Bus Specification).
    case nonBasicDictionaryKey(String)
    case nestingTooDeep(limit: Int)
    case outOfMemory
    /// Bytes that libdbus would not accept as a message (its reason).
    case malformedMessage(String)
    /// A type code this wrapper does not read (unix file descriptors).
    case unsupportedType(Int32)

    public var description: String {
        switch self {
        case .stringContainsNUL: return "string contains a NUL character, which D-Bus strings cannot carry"
        case .invalidObjectPath(let path): return "'\(path)' is not a valid D-Bus object path (like /org/beacond/client/1)"
        case .invalidSignature(let signature): return "'\(signature)' is not a valid single complete D-Bus type signature"
        case .invalidName(let name, let kind): return "'\(name)' is not a valid D-Bus \(kind)"
        case .elementTypeMismatch(let expected, let found): return "container declares '\(expected)' but holds a '\(found)'"
        case .nonBasicDictionaryKey(let key): return "dictionary key type '\(key)' is not a basic type"
        case .nestingTooDeep(let limit): return "containers nested deeper than \(limit) levels"
        case .outOfMemory: return "libdbus ran out of memory"
        case .malformedMessage(let reason): return "not a valid D-Bus message: \(reason)"
        case .unsupportedType(let code): return "unsupported D-Bus type code \(code)"
        }
    }
}
