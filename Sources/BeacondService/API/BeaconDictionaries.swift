import BeacondAPI
public import BeaconKit
public import DBus
import Foundation

/// Region, constraint and beacon dictionaries (`a{sv}`) of the API, in both directions. Reading is strict
/// about meaning and lenient about integer width: a client that sends `Major` as an int32 (gdbus's default
/// for a bare number) gets what it meant, while a value out of range or a key we do not know is an error
/// that lists what is accepted.
public enum BeaconDictionaries {
    static let regionKeys: Set<String> = [BeacondKey.identifier, BeacondKey.uuid, BeacondKey.major, BeacondKey.minor,
                                          BeacondKey.notifyOnEntry, BeacondKey.notifyOnExit]
    static let constraintKeys: Set<String> = [BeacondKey.uuid, BeacondKey.major, BeacondKey.minor]

    /// A region from `StartMonitoring(a{sv})`.
    public static func region(from value: DBusValue) throws(BeacondError) -> BeaconRegion {
        let entries = try dictionary(value, allowed: regionKeys, what: "region", error: .invalidRegion)
        guard case .string(let identifier)? = entries[BeacondKey.identifier] else {
            throw BeacondError(.invalidRegion, "a region needs 'Identifier' (a string naming it, e.g. 'lobby'); "
                + "it has \(keysText(entries)). Example: {'Identifier': <'lobby'>, 'UUID': <'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0'>}")
        }
        let trimmed = identifier.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, identifier.utf8.count <= 256 else {
            throw BeacondError(.invalidRegion, "'Identifier' must be a non-empty name of at most 256 bytes")
        }
        let constraint = try constraint(entries, error: .invalidRegion)
        return BeaconRegion(identifier: identifier, constraint: constraint,
                            notifyOnEntry: try flag(entries, BeacondKey.notifyOnEntry),
                            notifyOnExit: try flag(entries, BeacondKey.notifyOnExit))
    }

    /// A constraint from `StartRanging(a{sv})` / `StopRanging(a{sv})`.
    public static func constraint(from value: DBusValue) throws(BeacondError) -> BeaconIdentityConstraint {
        let entries = try dictionary(value, allowed: constraintKeys, what: "constraint", error: .invalidRegion)
        return try constraint(entries, error: .invalidRegion)
    }

    static func dictionary(_ value: DBusValue, allowed: Set<String>, what: String,
                           error: BeacondErrorName) throws(BeacondError) -> [String: DBusValue] {
        guard let entries = value.vardictEntries else {
            throw BeacondError(.invalidArguments, "the \(what) must be a dictionary a{sv}, not '\(value.signature)'")
        }
        if let unknown = entries.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw BeacondError(error, "unknown \(what) key '\(unknown)'; \(what) keys are \(allowed.sorted().joined(separator: ", "))")
        }
        return entries
    }

    static func constraint(_ entries: [String: DBusValue], error: BeacondErrorName) throws(BeacondError) -> BeaconIdentityConstraint {
        guard case .string(let text)? = entries[BeacondKey.uuid] else {
            throw BeacondError(error, "'UUID' is required, as a string like 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0'")
        }
        guard let uuid = UUID(uuidString: text) else {
            throw BeacondError(error, "UUID '\(text)' is not a UUID; write it as 8-4-4-4-12 hex digits, "
                + "e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        let major = try uint16(entries, BeacondKey.major, error: error)
        let minor = try uint16(entries, BeacondKey.minor, error: error)
        do {
            return try BeaconIdentityConstraint(uuid: uuid, major: major, minor: minor)
        } catch {
            throw BeacondError(.invalidRegion, "\(error)")
        }
    }

    static func uint16(_ entries: [String: DBusValue], _ key: String, error: BeacondErrorName) throws(BeacondError) -> UInt16? {
        guard let value = entries[key] else { return nil }
        let number: Int64? = switch value {
        case .byte(let n): Int64(n)
        case .int16(let n): Int64(n)
        case .uint16(let n): Int64(n)
        case .int32(let n): Int64(n)
        case .uint32(let n): Int64(n)
        case .int64(let n): n
        case .uint64(let n): n > UInt64(Int64.max) ? nil : Int64(n)
        default: nil
        }
        guard let number, (0...65535).contains(number) else {
            throw BeacondError(error, "'\(key)' must be an integer 0...65535 (D-Bus type q), not \(describe(value))")
        }
        return UInt16(number)
    }

    static func flag(_ entries: [String: DBusValue], _ key: String) throws(BeacondError) -> Bool {
        guard let value = entries[key] else { return true }
        guard case .boolean(let flag) = value else {
            throw BeacondError(.invalidRegion, "'\(key)' must be a boolean (D-Bus type b), not \(describe(value))")
        }
        return flag
    }

    static func describe(_ value: DBusValue) -> String {
        switch value {
        case .string(let text): return "the string '\(text.prefix(40))'"
        default: return "a value of type '\(value.signature)'"
        }
    }

    static func keysText(_ entries: [String: DBusValue]) -> String {
        entries.isEmpty ? "no keys" : "keys " + entries.keys.sorted().joined(separator: ", ")
    }

    // MARK: Out

    public static func dictionary(_ region: BeaconRegion) -> DBusValue {
        var entries = constraintEntries(region.constraint)
        entries[BeacondKey.identifier] = .string(region.identifier)
        entries[BeacondKey.notifyOnEntry] = .boolean(region.notifyOnEntry)
        entries[BeacondKey.notifyOnExit] = .boolean(region.notifyOnExit)
        return .vardict(entries)
    }

    public static func dictionary(_ constraint: BeaconIdentityConstraint) -> DBusValue {
        .vardict(constraintEntries(constraint))
    }

    static func constraintEntries(_ constraint: BeaconIdentityConstraint) -> [String: DBusValue] {
        var entries: [String: DBusValue] = [BeacondKey.uuid: .string(constraint.uuid.uuidString)]
        if let major = constraint.major { entries[BeacondKey.major] = .uint16(major) }
        if let minor = constraint.minor { entries[BeacondKey.minor] = .uint16(minor) }
        return entries
    }

    public static func dictionary(_ beacon: RangedBeacon) -> DBusValue {
        .vardict([
            BeacondKey.uuid: .string(beacon.identity.uuid.uuidString),
            BeacondKey.major: .uint16(beacon.identity.major),
            BeacondKey.minor: .uint16(beacon.identity.minor),
            BeacondKey.rssi: .int16(Int16(clamping: beacon.rssi)),
            BeacondKey.accuracy: .double(beacon.accuracy.isFinite ? beacon.accuracy : -1),
            BeacondKey.proximity: .string(beacon.proximity.rawValue),
            BeacondKey.txPower: .int16(Int16(beacon.measuredPower)),
            BeacondKey.timestamp: .uint64(UInt64(clamping: beacon.timestamp.microsecondsSinceEpoch)),
        ])
    }

    public static func array(_ dictionaries: [DBusValue]) -> DBusValue {
        .array(elementSignature: "a{sv}", dictionaries)
    }
}
