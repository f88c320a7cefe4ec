/// An `a{sv}` dictionary from beacond with its variants unwrapped (keys from BeacondAPI's Names.swift).
public typealias VarDict = [String: DBusValue]

extension DBusValue {
    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// Any D-Bus integer as `Int64` (nil for non-integers and for `t` values above `Int64.max`).
    public var integerValue: Int64? {
        switch unwrapped {
        case .byte(let v): return Int64(v)
        case .int16(let v): return Int64(v)
        case .uint16(let v): return Int64(v)
        case .int32(let v): return Int64(v)
        case .uint32(let v): return Int64(v)
        case .int64(let v): return v
        case .uint64(let v): return Int64(exactly: v)
        default: return nil
        }
    }

    /// A string, object path or signature.
    public var stringValue: String? {
        switch unwrapped {
        case .string(let v), .objectPath(let v), .signature(let v): return v
        default: return nil
        }
    }

    /// The elements of an array (empty for anything else).
    public var arrayElements: [DBusValue] {
        if case .array(_, let elements) = unwrapped { return elements }
        return []
    }
}

extension Dictionary where Key == String, Value == DBusValue {
    public func string(_ key: String) -> String? { self[key]?.stringValue }

    public func bool(_ key: String) -> Bool? {
        if case .boolean(let value)? = self[key]?.unwrapped { return value }
        return nil
    }

    public func integer(_ key: String) -> Int64? { self[key]?.integerValue }

    /// A double, or an integer read as a double.
    public func double(_ key: String) -> Double? {
        guard let value = self[key]?.unwrapped else { return nil }
        if case .double(let number) = value { return number }
        return value.integerValue.map(Double.init)
    }

    /// A nested `a{sv}`.
    public func dictionary(_ key: String) -> VarDict? { self[key]?.unwrapped.vardictEntries }

    /// An `aa{sv}` (entries that are not `a{sv}` are skipped).
    public func dictionaries(_ key: String) -> [VarDict] {
        (self[key]?.arrayElements ?? []).compactMap { $0.unwrapped.vardictEntries }
    }

    /// An `as`.
    public func strings(_ key: String) -> [String] {
        (self[key]?.arrayElements ?? []).compactMap(\.stringValue)
    }
}
