import BeacondAPI
public import BeaconKit
public import DBus
import Foundation
public import BeacondCore

/// Region, constraint and beacon dictionaries (`a{sv}`) of the API, in both directions. Reading is strict
/// about meaning and lenient about integer width: a client that sends `Major` as an int32 (gdbus's default
/// for a bare number) gets what it meant, while a value out of range or a key we do not know is an error
/// that lists what is accepted.
public enum BeaconDictionaries {
    static let regionKeys: Set<String> = [
        BeacondKey.identifier, BeacondKey.kind, BeacondKey.uuid, BeacondKey.major, BeacondKey.minor,
        BeacondKey.namespace, BeacondKey.instance, BeacondKey.device,
        BeacondKey.notifyOnEntry, BeacondKey.notifyOnExit, BeacondKey.enterRSSI,
        BeacondKey.absentRSSI, BeacondKey.room, BeacondKey.entryDelay,
        BeacondKey.exitDelay,
    ]
    static let constraintKeys: Set<String> = [
        BeacondKey.kind, BeacondKey.uuid, BeacondKey.major, BeacondKey.minor, BeacondKey.namespace, BeacondKey.instance,
        BeacondKey.device,
    ]
    /// Which keys name the beacon, for each kind (the rest of a region's keys are the same for every kind).
    static let identityKeys: [BeaconKind: [String]] = [
        .iBeacon: [BeacondKey.uuid, BeacondKey.major, BeacondKey.minor],
        .altBeacon: [BeacondKey.uuid, BeacondKey.major, BeacondKey.minor],
        .eddystone: [BeacondKey.namespace, BeacondKey.instance],
        .privateDevice: [BeacondKey.device],
    ]
    /// "an iBeacon", "an AltBeacon", "an Eddystone", "a PrivateDevice".
    static func withArticle(_ kind: BeaconKind) -> String {
        let vowel = kind == .iBeacon || "AEIOU".contains(kind.name.prefix(1))
        return (vowel ? "an " : "a ") + kind.name
    }

    static let kindsText = BeaconKind.allCases.map { "'\($0.name)'" }.joined(separator: ", ")

    /// The longest region identifier, in UTF-8 bytes.
    public static let maxIdentifierBytes = 256
    static let identifierExample = "Example: {'Identifier': <'lobby'>, 'UUID': <'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0'>}"
    static let uuidAllowed = "a string like 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0' (8-4-4-4-12 hex digits)"

    /// A region from `StartMonitoring(a{sv})`.
    public static func region(from value: DBusValue) throws(BeacondError) -> BeaconRegion {
        let entries = try dictionary(value, allowed: regionKeys, what: "region", error: .invalidRegion)
        let identifier = try identifier(entries[BeacondKey.identifier], keys: entries)
        let constraint = try constraint(entries, error: .invalidRegion)
        return BeaconRegion(
            identifier: identifier, constraint: constraint,
            notifyOnEntry: try flag(entries, BeacondKey.notifyOnEntry),
            notifyOnExit: try flag(entries, BeacondKey.notifyOnExit),
            hysteresis: try hysteresis(entries), room: try room(entries[BeacondKey.room]),
            entryDelay: try delay(entries, BeacondKey.entryDelay),
            exitDelay: try delay(entries, BeacondKey.exitDelay))
    }

    /// The longest EntryDelay or ExitDelay, seconds (a day: presence needs no longer).
    public static let longestDelay = 86_400.0
    /// The shortest ExitDelay, seconds (what the daemon's own exits can resolve).
    public static let shortestExitDelay = 0.1

    /// `EntryDelay` or `ExitDelay`: seconds as a number (d; integers are accepted too).
    static func delay(_ entries: [String: DBusValue], _ key: String) throws(BeacondError) -> Duration? {
        guard let value = entries[key] else { return nil }
        let seconds: Double
        switch value {
        case .double(let number): seconds = number
        default:
            guard let number = integer(value) else {
                throw BeacondError(
                    .invalidRegion,
                    "'\(key)' must be a number of seconds (D-Bus type d; integers are accepted); "
                        + "given \(describe(value)). Example: {'\(key)': <5.0>}")
            }
            seconds = Double(number)
        }
        let lowest = key == BeacondKey.exitDelay ? shortestExitDelay : 0
        guard seconds.isFinite, seconds >= lowest, seconds <= longestDelay else {
            throw BeacondError(
                .invalidRegion,
                "'\(key)' is \(seconds) s: give \(lowest) to \(Int(longestDelay)) seconds "
                    + (key == BeacondKey.exitDelay
                        ? "(how long a silence exits this region, e.g. 5.0)"
                        : "(how long a beacon must be heard before the region is entered, e.g. 10.0)"))
        }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    /// The longest room name, in UTF-8 bytes.
    public static let maxRoomBytes = 64

    /// `Room`: a room as receivers' topics name it: lowercase letters, digits, '_' and '-' (ESPresense's room slug).
    static func room(_ value: DBusValue?) throws(BeacondError) -> String? {
        guard let value else { return nil }
        let allowed =
            "a room as the receivers name it: 1...\(maxRoomBytes) of a-z, 0-9, '_' and '-', e.g. 'kitchen' "
            + "(`beaconctl status` lists the receivers' rooms)"
        guard case .string(let room) = value else {
            throw BeacondError(.invalidRegion, "'\(BeacondKey.room)' must be a string (D-Bus type s): \(allowed); given \(describe(value))")
        }
        guard RegionSpec.isRoom(room) else {
            throw BeacondError(.invalidRegion, "'\(BeacondKey.room)' is \(ClientText.quoted(room, limit: 40)): it must be \(allowed)")
        }
        return room
    }

    /// The RSSI values a hysteresis threshold may have, dBm (what an HCI report can carry: −127…20).
    public static let rssiRange = -127...20

    /// `EnterRSSI` and `AbsentRSSI`: both or neither, each in `rssiRange`, EnterRSSI ≥ AbsentRSSI.
    static func hysteresis(_ entries: [String: DBusValue]) throws(BeacondError) -> RSSIHysteresis? {
        let enterKey = BeacondKey.enterRSSI, absentKey = BeacondKey.absentRSSI
        switch (entries[enterKey], entries[absentKey]) {
        case (nil, nil): return nil
        case let (enterValue?, absentValue?):
            let enter = try rssi(enterValue, enterKey), absent = try rssi(absentValue, absentKey)
            guard let hysteresis = try? RSSIHysteresis(enterAtOrAbove: enter, absentBelow: absent) else {
                throw BeacondError(
                    .invalidRegion,
                    "'\(enterKey)' must be at least '\(absentKey)'; given EnterRSSI \(enter) "
                        + "and AbsentRSSI \(absent) dBm: a sighting strong enough to enter cannot also count as absent. "
                        + "Example: EnterRSSI -70, AbsentRSSI -80")
            }
            return hysteresis
        case let (given, _):
            let (present, missing) = given == nil ? (absentKey, enterKey) : (enterKey, absentKey)
            throw BeacondError(
                .invalidRegion,
                "'\(present)' is given without '\(missing)': give both or neither "
                    + "(EnterRSSI n: at or above it a sighting can enter; AbsentRSSI n: below it a sighting does not count; "
                    + "e.g. EnterRSSI -70, AbsentRSSI -80)")
        }
    }

    static func rssi(_ value: DBusValue, _ key: String) throws(BeacondError) -> Int {
        guard let number = integer(value), rssiRange.contains(Int(clamping: number)) else {
            throw BeacondError(
                .invalidRegion,
                "'\(key)' must be an integer \(rssiRange.lowerBound)...\(rssiRange.upperBound) "
                    + "(dBm, D-Bus type n; any integer type is accepted); given \(describe(value))")
        }
        return Int(number)
    }

    /// `Identifier`: a string of printable text, not blank, at most `maxIdentifierBytes` bytes.
    static func identifier(_ value: DBusValue?, keys entries: [String: DBusValue]) throws(BeacondError) -> String {
        let key = BeacondKey.identifier
        let allowed = "a string of 1...\(maxIdentifierBytes) bytes of printable text naming the region, e.g. 'lobby'"
        guard let value else {
            throw BeacondError(
                .invalidRegion,
                "'\(key)' is missing (the region has \(keysText(entries))); it must be "
                    + "\(allowed). \(identifierExample)")
        }
        guard case .string(let identifier) = value else {
            throw BeacondError(.invalidRegion, "'\(key)' must be a string (D-Bus type s): \(allowed); given \(describe(value))")
        }
        let bytes = identifier.utf8.count
        guard bytes <= maxIdentifierBytes else {
            throw BeacondError(
                .invalidRegion,
                "'\(key)' is \(bytes) bytes long (\(ClientText.quoted(identifier, limit: 40))); "
                    + "at most \(maxIdentifierBytes) bytes are allowed")
        }
        if let control = ClientText.firstControl(in: identifier) {
            let code = String(format: "U+%04X", control.value)
            throw BeacondError(
                .invalidRegion,
                "'\(key)' must not contain control characters (C0, DEL, C1, e.g. ESC, "
                    + "tab, newline); given \(ClientText.quoted(identifier)), which contains \(code). Allowed: \(allowed)")
        }
        guard !identifier.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw BeacondError(
                .invalidRegion,
                "'\(key)' must not be empty or only spaces; given "
                    + "\(ClientText.quoted(identifier)). Allowed: \(allowed)")
        }
        return identifier
    }

    /// A constraint from `StartRanging(a{sv})` / `StopRanging(a{sv})`.
    public static func constraint(from value: DBusValue) throws(BeacondError) -> BeaconIdentityConstraint {
        let entries = try dictionary(value, allowed: constraintKeys, what: "constraint", error: .invalidRegion)
        return try constraint(entries, error: .invalidRegion)
    }

    static func dictionary(
        _ value: DBusValue, allowed: Set<String>, what: String,
        error: BeacondErrorName
    ) throws(BeacondError) -> [String: DBusValue] {
        guard let entries = value.vardictEntries else {
            throw BeacondError(.invalidArguments, "the \(what) must be a dictionary a{sv}, not '\(value.signature)'")
        }
        if let unknown = entries.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw BeacondError(
                error,
                "unknown \(what) key \(ClientText.quoted(unknown)) (given \(describe(entries[unknown]!))); "
                    + "\(what) keys are \(allowed.sorted().joined(separator: ", "))")
        }
        return entries
    }

    static func constraint(_ entries: [String: DBusValue], error: BeacondErrorName) throws(BeacondError) -> BeaconIdentityConstraint {
        let kind = try kind(entries[BeacondKey.kind], error: error)
        let allowed = identityKeys[kind] ?? []
        if let stray = identityKeys.values.joined().filter({ entries[$0] != nil && !allowed.contains($0) }).sorted().first {
            throw BeacondError(
                error,
                "'\(stray)' does not name \(Self.withArticle(kind)) (Kind \(kind.name)"
                    + (entries[BeacondKey.kind] == nil ? ", the default" : "") + "): \(Self.withArticle(kind)) is named by "
                    + allowed.map { "'\($0)'" }.joined(separator: ", ") + ". Give the right 'Kind' (\(kindsText)) or leave '\(stray)' out")
        }
        switch kind {
        case .iBeacon, .altBeacon:
            let key = BeacondKey.uuid
            let what = kind == .altBeacon ? "the AltBeacon's id1, " : ""
            guard let value = entries[key] else {
                throw BeacondError(error, "'\(key)' is required but missing; give it as \(what)\(uuidAllowed)")
            }
            guard case .string(let text) = value else {
                throw BeacondError(error, "'\(key)' must be \(what)\(uuidAllowed); given \(describe(value))")
            }
            guard let uuid = UUID(uuidString: text) else {
                throw BeacondError(
                    error,
                    "'\(key)' \(ClientText.quoted(text, limit: 40)) is not a UUID; write it as 8-4-4-4-12 "
                        + "hex digits, e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
            }
            let major = try uint16(entries, BeacondKey.major, error: error)
            let minor = try uint16(entries, BeacondKey.minor, error: error)
            do {
                return try BeaconIdentityConstraint(kind: kind, uuid: uuid, major: major, minor: minor)
            } catch {
                throw BeacondError(
                    .invalidRegion,
                    "'\(BeacondKey.minor)' \(minor.map(String.init) ?? "") is given without "
                        + "'\(BeacondKey.major)': a minor only narrows a major. Give 'Major' too, or leave 'Minor' out")
            }
        case .eddystone:
            let namespaceText = try hexText(entries, BeacondKey.namespace, digits: 20, example: "edd1ebeac04e5defa017", error: error)
            guard let namespaceText, let namespace = EddystoneNamespace(hex: namespaceText) else {
                throw BeacondError(
                    error,
                    "'\(BeacondKey.namespace)' is required for Kind Eddystone; give the namespace as 20 hex digits, "
                        + "e.g. 'edd1ebeac04e5defa017'")
            }
            let instanceText = try hexText(entries, BeacondKey.instance, digits: 12, example: "0123456789ab", error: error)
            return .eddystone(namespace: namespace, instance: instanceText.flatMap(EddystoneInstance.init(hex:)))
        case .privateDevice:
            let key = BeacondKey.device
            let allowed = "the name its key was declared under in [devices] (1-64 of a-z, 0-9, '_' and '-'), e.g. 'alice-phone'"
            guard let value = entries[key] else {
                throw BeacondError(error, "'\(key)' is required for Kind PrivateDevice; give \(allowed)")
            }
            guard case .string(let name) = value, BeaconIdentityConstraint.isDeviceName(name) else {
                throw BeacondError(error, "'\(key)' must be \(allowed); given \(describe(value))")
            }
            return .privateDevice(named: name)
        }
    }

    /// `Kind`: absent is iBeacon (every client written before kinds keeps working).
    static func kind(_ value: DBusValue?, error: BeacondErrorName) throws(BeacondError) -> BeaconKind {
        guard let value else { return .iBeacon }
        guard case .string(let name) = value, let kind = BeaconKind(name: name) else {
            throw BeacondError(
                error,
                "'\(BeacondKey.kind)' must be one of \(kindsText) (a string, type s; absent means iBeacon); "
                    + "given \(describe(value))")
        }
        return kind
    }

    /// A hex identifier of exactly `digits` hex digits (either case), or nil when absent.
    static func hexText(
        _ entries: [String: DBusValue], _ key: String, digits: Int, example: String, error: BeacondErrorName
    ) throws(BeacondError) -> String? {
        guard let value = entries[key] else { return nil }
        guard case .string(let text) = value, text.utf8.count == digits, text.utf8.allSatisfy({ HexBytes.isDigit($0) }) else {
            throw BeacondError(error, "'\(key)' must be \(digits) hex digits, e.g. '\(example)'; given \(describe(value))")
        }
        return text
    }

    /// Any D-Bus integer as an Int64 (nil for a uint64 beyond Int64 and for non-integers).
    static func integer(_ value: DBusValue) -> Int64? {
        switch value {
        case .byte(let n): Int64(n)
        case .int16(let n): Int64(n)
        case .uint16(let n): Int64(n)
        case .int32(let n): Int64(n)
        case .uint32(let n): Int64(n)
        case .int64(let n): n
        case .uint64(let n): n > UInt64(Int64.max) ? nil : Int64(n)
        default: nil
        }
    }

    static func uint16(_ entries: [String: DBusValue], _ key: String, error: BeacondErrorName) throws(BeacondError) -> UInt16? {
        guard let value = entries[key] else { return nil }
        guard let number = integer(value), (0...65535).contains(number) else {
            throw BeacondError(
                error,
                "'\(key)' must be an integer 0...65535 (D-Bus type q; any integer type is accepted); "
                    + "given \(describe(value))")
        }
        return UInt16(number)
    }

    static func flag(_ entries: [String: DBusValue], _ key: String) throws(BeacondError) -> Bool {
        guard let value = entries[key] else { return true }
        guard case .boolean(let flag) = value else {
            throw BeacondError(.invalidRegion, "'\(key)' must be a boolean (D-Bus type b, true or false); given \(describe(value))")
        }
        return flag
    }

    /// What a client gave, for a message: its type and value, client text escaped.
    static func describe(_ value: DBusValue) -> String {
        switch value {
        case .string(let text): return "the string \(ClientText.quoted(text, limit: 40)) (type s)"
        case .boolean(let flag): return "the boolean \(flag) (type b)"
        case .double(let number): return "the number \(number) (type d)"
        case .uint64(let number): return "the integer \(number) (type t)"
        default:
            if let number = integer(value) { return "the integer \(number) (type \(value.signature))" }
            return "a value of type '\(value.signature)'"
        }
    }

    static func keysText(_ entries: [String: DBusValue]) -> String {
        entries.isEmpty ? "no keys" : "keys " + entries.keys.sorted().map { ClientText.quoted($0, limit: 40) }.joined(separator: ", ")
    }

    // MARK: Out

    public static func dictionary(_ region: BeaconRegion) -> DBusValue {
        var entries = constraintEntries(region.constraint)
        entries[BeacondKey.identifier] = .string(region.identifier)
        entries[BeacondKey.notifyOnEntry] = .boolean(region.notifyOnEntry)
        entries[BeacondKey.notifyOnExit] = .boolean(region.notifyOnExit)
        if let hysteresis = region.hysteresis {
            entries[BeacondKey.enterRSSI] = .int16(Int16(clamping: hysteresis.enterAtOrAbove))
            entries[BeacondKey.absentRSSI] = .int16(Int16(clamping: hysteresis.absentBelow))
        }
        if let room = region.room { entries[BeacondKey.room] = .string(room) }
        if let delay = region.entryDelay { entries[BeacondKey.entryDelay] = .double(Double(delay.wholeMicroseconds) / 1_000_000) }
        if let delay = region.exitDelay { entries[BeacondKey.exitDelay] = .double(Double(delay.wholeMicroseconds) / 1_000_000) }
        return .vardict(entries)
    }

    public static func dictionary(_ constraint: BeaconIdentityConstraint) -> DBusValue {
        .vardict(constraintEntries(constraint))
    }

    /// An iBeacon's keys are what they were before kinds (no `Kind`), so existing clients see no change.
    static func constraintEntries(_ constraint: BeaconIdentityConstraint) -> [String: DBusValue] {
        var entries: [String: DBusValue] = [:]
        switch constraint.kind {
        case .iBeacon, .altBeacon:
            entries[BeacondKey.uuid] = .string(constraint.uuid.uuidString)
            if let major = constraint.major { entries[BeacondKey.major] = .uint16(major) }
            if let minor = constraint.minor { entries[BeacondKey.minor] = .uint16(minor) }
        case .eddystone:
            entries[BeacondKey.namespace] = .string(EddystoneNamespace(identityBytes: constraint.uuid).description)
            if let instance = constraint.eddystoneInstance { entries[BeacondKey.instance] = .string(instance.description) }
        case .privateDevice:
            entries[BeacondKey.device] = .string(constraint.deviceName ?? constraint.uuid.uuidString)
        }
        if constraint.kind != .iBeacon { entries[BeacondKey.kind] = .string(constraint.kind.name) }
        return entries
    }

    /// A ranged beacon. `deviceName` names a private device (its identity is only its key's fingerprint): the name in
    /// the constraint it was ranged for.
    public static func dictionary(_ beacon: RangedBeacon, deviceName: String? = nil) -> DBusValue {
        let identity = beacon.identity
        var entries = constraintEntries(
            identity.kind == .privateDevice
                ? .privateDevice(fingerprint: identity.uuid, name: deviceName) : BeaconIdentityConstraint(identity))
        if let telemetry = beacon.telemetry {
            if let millivolts = telemetry.batteryMillivolts { entries[BeacondKey.batteryMillivolts] = .uint16(millivolts) }
            if let temperature = telemetry.temperature { entries[BeacondKey.temperature] = .double(temperature) }
        }
        entries.merge(measurementEntries(beacon)) { $1 }
        return .vardict(entries)
    }

    static func measurementEntries(_ beacon: RangedBeacon) -> [String: DBusValue] {
        [
            BeacondKey.rssi: .int16(Int16(clamping: beacon.rssi)),
            BeacondKey.accuracy: .double(beacon.accuracy.isFinite ? beacon.accuracy : -1),
            BeacondKey.proximity: .string(beacon.proximity.rawValue),
            BeacondKey.txPower: .int16(Int16(beacon.measuredPower)),
            BeacondKey.timestamp: .uint64(UInt64(clamping: beacon.timestamp.microsecondsSinceEpoch)),
        ]
    }

    public static func array(_ dictionaries: [DBusValue]) -> DBusValue {
        .array(elementSignature: "a{sv}", dictionaries)
    }
}
