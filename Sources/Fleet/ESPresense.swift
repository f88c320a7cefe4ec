public import BeaconKit
import BeacondAPI
import Foundation

/// ESPresense's MQTT conventions, which beacond speaks so that ESPresense nodes, ESPresense-companion and Home
/// Assistant's `mqtt_room` work with beacond receivers unchanged. Facts from ESPresense's firmware (`src/main.cpp`,
/// `BleFingerprint.cpp`, `string_utils.cpp`); pure, no I/O.
public enum ESPresense {
    /// The topic prefix, fixed in ESPresense (`CHANNEL`).
    public static let channel = "espresense"
    /// Every reading of every node: `espresense/devices/<device id>/<room>`.
    public static let deviceSubscription = "espresense/devices/+/+"
    /// Every node's `online`/`offline`.
    public static let statusSubscription = "espresense/rooms/+/status"
    public static let online = "online"
    public static let offline = "offline"

    /// The device id ESPresense gives a beacon of this kind (read from its source, BleFingerprint.cpp):
    /// - `iBeacon:<uuid>-<major>-<minor>` and `altBeacon:<id1>-<id2>-<id3>`: the UUID in lowercase 8-4-4-4-12 form,
    ///   the numbers in decimal (`Sprintf("iBeacon:%s-%u-%u", …)` with NimBLE's UUID string);
    /// - `eddy:<namespace>-<instance>` in lowercase hex, with ESPresense's quirk: it prints the namespace's fifth
    ///   byte twice (22 digits), so ids match the ones its nodes publish;
    /// - `irk:<key>`: a private device by its Identity Resolving Key, most significant byte first, when `key` is
    ///   given (only the administrator's devices are published; see ReadingPublisher). Without it, a private
    ///   device's id is `device:<fingerprint>`, which no ESPresense node makes.
    public static func deviceID(_ identity: BeaconIdentity, key: IdentityResolvingKey? = nil) -> String {
        switch identity.kind {
        case .iBeacon:
            return "iBeacon:\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .altBeacon:
            return "altBeacon:\(identity.uuid.uuidString.lowercased())-\(identity.major)-\(identity.minor)"
        case .eddystone:
            let namespace = identity.eddystoneNamespace.bytes
            let printed = Array(namespace[0...4]) + [namespace[4]] + Array(namespace[5...9])
            return "eddy:\(HexBytes.lowercase(printed))-\(identity.eddystoneInstance)"
        case .privateDevice:
            return key?.espresenseID ?? "device:\(identity.uuid.uuidString.lowercased())"
        }
    }

    /// The beacon a device id names (any case, as `mqtt_room` compares them): `iBeacon:`, `altBeacon:`, `eddy:` (its
    /// 22-digit namespace or a plain 20-digit one) and `irk:` (a private device, by its key's fingerprint: it counts
    /// for the regions of whoever declared that key). nil for another kind of id (`mac`, `name:`, …) or a malformed
    /// one.
    public static func identity(fromDeviceID id: String) -> BeaconIdentity? {
        let bytes = id.utf8.span
        if hasPrefix(bytes, "ibeacon:") { return numbered(bytes, prefix: 8, kind: .iBeacon) }
        if hasPrefix(bytes, "altbeacon:") { return numbered(bytes, prefix: 10, kind: .altBeacon) }
        if hasPrefix(bytes, "eddy:") { return eddystone(String(id.dropFirst(5))) }
        if hasPrefix(bytes, "irk:") {
            guard id.utf8.count == 36, let key = try? IdentityResolvingKey(parsing: id) else { return nil }
            return .privateDevice(fingerprint: key.fingerprint)
        }
        return nil
    }

    /// The node a device id `node:<id>` names: ESPresense nodes advertise themselves (an iBeacon of UUID
    /// e5ca1ade-f007-ba11-0000-000000000000) and the others report it under that id (Enrollment.cpp's discovery);
    /// its id is the node's room slug, as in its topics. nil for any other id.
    public static func nodeID(fromDeviceID id: String) -> String? {
        guard hasPrefix(id.utf8.span, "node:") else { return nil }
        return String(id.dropFirst(5))
    }

    /// For an id of a kind beacond reads that `identity(fromDeviceID:)` could not read: the form it must have. nil for
    /// an id of another kind (`mac:`, `name:`, …), which is no mistake.
    public static func expectedForm(ofDeviceID id: String) -> String? {
        let bytes = id.utf8.span
        if hasPrefix(bytes, "ibeacon:") || hasPrefix(bytes, "altbeacon:") {
            return "an \(hasPrefix(bytes, "ibeacon:") ? "iBeacon" : "AltBeacon") id is its UUID (8-4-4-4-12 hex digits), "
                + "major and minor (0-65535), e.g. iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"
        }
        if hasPrefix(bytes, "eddy:") {
            return "an Eddystone id is eddy:NAMESPACE-INSTANCE, 20 (or ESPresense's 22) and 12 hex digits"
        }
        if hasPrefix(bytes, "irk:") { return "an irk: id is irk: and the key's 32 hex digits" }
        return nil
    }

    /// `topic` as messages show it: an `irk:` id in it (a key, readable by fewer than a status or journal's readers)
    /// replaced by `irk:…`, and cut after 200 bytes (a topic may be 64 KiB).
    public static func shownTopic(_ topic: String) -> String {
        var parts = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for index in parts.indices where hasPrefix(parts[index].utf8.span, "irk:") {
            parts[index] = "irk:…"
        }
        let shown = parts.joined(separator: "/")
        guard shown.utf8.count > 200 else { return shown }
        return String(decoding: shown.utf8.prefix(200), as: UTF8.self) + "…"
    }

    /// `<namespace>-<instance>` after `eddy:`.
    private static func eddystone(_ text: String) -> BeaconIdentity? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let instance = EddystoneInstance(hex: String(parts[1])), parts[1].utf8.count == 12,
            var namespace = HexBytes.parse(String(parts[0])), !parts[0].contains(":")
        else { return nil }
        if namespace.count == 11, namespace[4] == namespace[5] { namespace.remove(at: 5) }
        guard let parsed = EddystoneNamespace(bytes: namespace) else { return nil }
        return .eddystone(namespace: parsed, instance: instance)
    }

    /// Whether the id starts with `prefix` (lowercase ASCII), in any case.
    private static func hasPrefix(_ bytes: Span<UInt8>, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return prefix.withUTF8Buffer { expected in
            for index in 0..<count {
                let byte = bytes[index]
                guard byte == expected[index] || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == expected[index]) else { return false }
            }
            return true
        }
    }

    /// `<uuid>-<n>-<n>` after a prefix of `prefix` bytes, as an identity of `kind`.
    private static func numbered(_ bytes: Span<UInt8>, prefix: Int, kind: BeaconKind) -> BeaconIdentity? {
        // Read from the UTF-8 bytes where they lie (a span: no copy, no allocation): every remote reading names its
        // device, so this is on the consuming hot path (UUID(uuidString:) and splitting cost more than the rest of a
        // reading together).
        guard bytes.count >= prefix + 36 + 4 else { return nil }
        var position = prefix
        // The UUID's 16 bytes, big-endian in two halves.
        var halves: (UInt64, UInt64) = (0, 0)
        for byteIndex in 0..<16 {
            if byteIndex == 4 || byteIndex == 6 || byteIndex == 8 || byteIndex == 10 {
                guard bytes[position] == UInt8(ascii: "-") else { return nil }
                position += 1
            }
            guard let high = hexDigit(bytes[position]), let low = hexDigit(bytes[position + 1]) else { return nil }
            let byte = UInt64(high << 4 | low)
            if byteIndex < 8 { halves.0 = halves.0 << 8 | byte } else { halves.1 = halves.1 << 8 | byte }
            position += 2
        }
        guard let major = decimal(bytes, at: &position), let minor = decimal(bytes, at: &position), position == bytes.count
        else { return nil }
        func byte(_ half: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: half >> (56 - 8 * index)) }
        let (a, b) = halves
        let identifier = UUID(
            uuid: (
                byte(a, 0), byte(a, 1), byte(a, 2), byte(a, 3), byte(a, 4), byte(a, 5), byte(a, 6), byte(a, 7),
                byte(b, 0), byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6), byte(b, 7)
            ))
        return BeaconIdentity(kind: kind, uuid: identifier, major: major, minor: minor)
    }

    /// `-` and a major or minor in decimal, as ESPresense writes them (%u): no leading zero, so one beacon has one id.
    private static func decimal(_ bytes: Span<UInt8>, at position: inout Int) -> UInt16? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "-") else { return nil }
        position += 1
        var value: UInt32 = 0
        let start = position
        while position < bytes.count, let digit = decimalDigit(bytes[position]), position - start < 5 {
            value = value * 10 + UInt32(digit)
            position += 1
        }
        guard position > start, value <= UInt32(UInt16.max), bytes[start] != UInt8(ascii: "0") || position == start + 1
        else { return nil }
        return UInt16(value)
    }

    /// Whether two device ids are one, in any case (`mqtt_room` compares them lowercased): byte by byte for ASCII
    /// ids, so the check every remote reading makes (its payload's id against its topic's) allocates nothing.
    public static func sameDeviceID(_ first: String, _ second: String) -> Bool {
        let (a, b) = (first.utf8.span, second.utf8.span)
        for index in 0..<min(a.count, b.count) {
            let (x, y) = (a[index], b[index])
            // Unicode lowercasing may change lengths and fold other characters: it decides once a byte is not ASCII.
            if x >= 0x80 || y >= 0x80 { return first.lowercased() == second.lowercased() }
            guard x == y || (x ^ y == 0x20 && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z")) else { return false }
        }
        guard a.count != b.count else { return true }
        // One is the other's ASCII prefix: lowercasing the rest of the longer cannot make it vanish.
        return false
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func decimalDigit(_ byte: UInt8) -> UInt8? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? byte - UInt8(ascii: "0") : nil
    }

    /// A room name as ESPresense puts it in topics: lowercased, each run of characters other than `a-z`, `0-9`
    /// and `_` one `_`, no `_` at either end ("Living Room" → `living_room`).
    public static func roomSlug(_ name: String) -> String {
        var slug = ""
        var pendingSeparator = false
        for scalar in name.lowercased().unicodeScalars {
            let keep = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
            if keep {
                if pendingSeparator && !slug.isEmpty { slug.append("_") }
                pendingSeparator = false
                slug.unicodeScalars.append(scalar)
            } else {
                pendingSeparator = true
            }
        }
        while slug.hasSuffix("_") { slug.removeLast() }
        while slug.hasPrefix("_") { slug.removeFirst() }
        return slug
    }

    public static func deviceTopic(deviceID: String, room: String) -> String { "\(channel)/devices/\(deviceID)/\(room)" }

    public static func statusTopic(room: String) -> String { "\(channel)/rooms/\(room)/status" }

    /// What a topic under `espresense/` is.
    public enum Topic: Hashable, Sendable {
        case device(id: String, room: String)
        case roomStatus(room: String)
        case other
    }

    public static func topic(_ topic: String) -> Topic {
        // By the UTF-8 bytes where they lie (every message of a subscription passes here): four levels, the first
        // `espresense`.
        let bytes = topic.utf8.span
        var slashes = (0, 0, 0)
        var count = 0
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "/") {
            switch count {
            case 0: slashes.0 = index
            case 1: slashes.1 = index
            case 2: slashes.2 = index
            default: return .other
            }
            count += 1
        }
        guard count == 3, slashes.2 - slashes.1 > 1, bytes.count - slashes.2 > 1,
            level(bytes, 0..<slashes.0, is: channel)
        else { return .other }
        func text(_ range: Range<Int>) -> String {
            let utf8 = topic.utf8
            return String(
                Substring(utf8[utf8.index(utf8.startIndex, offsetBy: range.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: range.upperBound)]))
        }
        if level(bytes, slashes.0 + 1..<slashes.1, is: "devices") {
            return .device(id: text(slashes.1 + 1..<slashes.2), room: text(slashes.2 + 1..<bytes.count))
        }
        if level(bytes, slashes.0 + 1..<slashes.1, is: "rooms"), level(bytes, slashes.2 + 1..<bytes.count, is: "status") {
            return .roomStatus(room: text(slashes.1 + 1..<slashes.2))
        }
        return .other
    }

    private static func level(_ bytes: Span<UInt8>, _ range: Range<Int>, is word: String) -> Bool {
        guard range.count == word.utf8.count else { return false }
        var index = range.lowerBound
        for byte in word.utf8 {
            guard bytes[index] == byte else { return false }
            index += 1
        }
        return true
    }
}

/// One receiver's reading of one device, in ESPresense's JSON (`BleFingerprint::fill`): what beacond publishes
/// and what it reads from other nodes. Keys other nodes send that beacond does not use are ignored.
public struct ESPresenseReading: Hashable, Sendable {
    /// `id`: the device id (`iBeacon:…` for an iBeacon).
    public var id: String
    /// `mac`: the advertiser's address, 12 lowercase hex digits without colons.
    public var mac: String?
    /// `rssi@1m`: the RSSI expected at one metre (the beacon's measured power unless calibrated).
    public var rssiAtOneMetre: Int?
    /// `rssi`: the smoothed RSSI, dBm, with the receiver's adjustment applied.
    public var rssi: Double?
    /// `rxAdj`: the receiver's RSSI adjustment, dB.
    public var receiverAdjustment: Int?
    /// `rxAdj` as sent (checked before it is rounded).
    public var exactReceiverAdjustment: Double?
    /// `distance`: metres.
    public var distance: Double?
    /// `int`: the mean advertising interval seen, milliseconds.
    public var interval: Int?
    public var name: String?

    public init(
        id: String, mac: String? = nil, rssiAtOneMetre: Int? = nil, rssi: Double? = nil,
        receiverAdjustment: Int? = nil, distance: Double? = nil, interval: Int? = nil, name: String? = nil
    ) {
        self.id = id
        self.mac = mac
        self.rssiAtOneMetre = rssiAtOneMetre
        self.rssi = rssi
        self.receiverAdjustment = receiverAdjustment
        self.exactReceiverAdjustment = receiverAdjustment.map(Double.init)
        self.distance = distance
        self.interval = interval
        self.name = name
    }

    /// `mac` as ESPresense writes it.
    public static func mac(_ address: BluetoothAddress) -> String {
        let hex = String(address.rawValue, radix: 16)
        return String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    /// The JSON ESPresense publishes: keys in its order, `rssi` and `distance` with exactly two decimals.
    public var json: String {
        var text = "{"
        func key(_ name: String, _ value: String) {
            if text.count > 1 { text += "," }
            text += "\"\(name)\":\(value)"
        }
        if let mac { key("mac", JSONString.quoted(mac)) }
        key("id", JSONString.quoted(id))
        if let name { key("name", JSONString.quoted(name)) }
        if let rssiAtOneMetre { key("rssi@1m", String(rssiAtOneMetre)) }
        if let rssi, rssi.isFinite { key("rssi", Self.twoDecimals(rssi)) }
        if let receiverAdjustment { key("rxAdj", String(receiverAdjustment)) }
        if let distance, distance.isFinite { key("distance", Self.twoDecimals(distance)) }
        if let interval { key("int", String(interval)) }
        return text + "}"
    }

    /// Why a payload is not a reading.
    public enum Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        case notJSON
        case notAnObject
        case missing(String)
        case wrongType(String)
        /// A value no radio or ESPresense node produces, with what it must be.
        case outOfRange(String, Double, must: String)

        public var description: String {
            switch self {
            case .notJSON: return "not JSON"
            case .notAnObject: return "not a JSON object"
            case .missing(let key): return "no \"\(key)\""
            case .wrongType(let key): return "\"\(key)\" has the wrong type"
            case .outOfRange(let key, let value, let must):
                let shown = value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
                return "\"\(key)\" is \(shown); it must be \(must)"
            }
        }
    }

    /// The RSSI a Bluetooth controller reports, dBm (HCI's range, Core Specification Vol 4 Part E 7.7.65.2); an
    /// `rssi@1m` is an RSSI too.
    public static let radioRSSI = -127.0...20.0
    /// A receiver's adjustment (`rxAdj`), dB: beacond's `rssi_offset` is bounded the same.
    public static let adjustments = -50.0...50.0
    /// The farthest distance, metres: Bluetooth LE's longest reach (coded PHY, in the open) is about a kilometre, and
    /// a farther estimate places nothing.
    public static let longestDistance = 1000.0
    /// The nearest, metres: a millimetre (ESPresense prints two decimals); 5e-324 is above 0 but no distance.
    public static let shortestDistance = 0.001

    /// Refuses a reading no radio or ESPresense node produces (an `rssi` of 200 would enter any region, a
    /// `distance` of 0 place a beacon at a receiver). `rssi` (rounded, as regions weigh it) and `rssi@1m` must be
    /// within `radioRSSI` moved by `rxAdj`, which receivers add to one or the other.
    public func checkPlausible() throws(Invalid) {
        // As sent, before rounding: 50.4 is beyond ±50.
        let adjustment = exactReceiverAdjustment ?? 0
        guard Self.adjustments.contains(adjustment) else { throw .outOfRange("rxAdj", adjustment, must: "within -50…50 dB") }
        let lowest = Self.radioRSSI.lowerBound + adjustment
        let highest = Self.radioRSSI.upperBound + adjustment
        // One key at a time, not a list of them: this runs for every remote reading.
        func checkRSSI(_ key: String, _ value: Double?) throws(Invalid) {
            guard let value, !(lowest...highest).contains(value.rounded()) else { return }
            throw .outOfRange(key, value, must: "within \(Int(lowest))…\(Int(highest)) dBm")
        }
        try checkRSSI("rssi", rssi)
        try checkRSSI("rssi@1m", rssiAtOneMetre.map(Double.init))
        if let distance, !(distance >= Self.shortestDistance && distance <= Self.longestDistance) {
            throw .outOfRange("distance", distance, must: "at least 0.001 and at most \(Int(Self.longestDistance)) m")
        }
    }

    /// Reads another node's reading. `id` and `distance` are required (as `mqtt_room` requires them); the rest is
    /// optional, and a value of the wrong type is an error rather than a guess.
    public init(json bytes: [UInt8]) throws(Invalid) {
        let parsed: ReadingJSON
        do {
            parsed = try ReadingJSON(bytes, keys: Self.keyBytes)
        } catch {
            throw error == .notAnObject ? .notAnObject : .notJSON
        }
        let values = parsed.values
        // By position in `keys` (a reading is parsed 100,000 times a second on a consuming node: no search by name).
        func string(_ key: Key) throws(Invalid) -> String? {
            switch values[key.rawValue] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw .wrongType(key.name)
            }
        }
        func number(_ key: Key) throws(Invalid) -> Double? {
            switch values[key.rawValue] {
            case nil, .null?: return nil
            case .number(let value)? where value.isFinite: return value
            default: throw .wrongType(key.name)
            }
        }
        func integer(_ key: Key) throws(Invalid) -> Int? {
            guard let value = try number(key) else { return nil }
            guard abs(value) < 1e9 else { throw .wrongType(key.name) }
            return Int(value.rounded())
        }
        guard let id = try string(.id) else { throw .missing("id") }
        guard !id.isEmpty else { throw .wrongType("id") }
        guard let distance = try number(.distance) else { throw .missing("distance") }
        self.id = id
        self.distance = distance
        mac = try string(.mac)
        name = try string(.name)
        rssiAtOneMetre = try integer(.rssiAtOneMetre)
        rssi = try number(.rssi)
        exactReceiverAdjustment = try number(.receiverAdjustment)
        receiverAdjustment = try integer(.receiverAdjustment)
        interval = try integer(.interval)
    }

    /// The keys beacond reads, in `keys`' order; the rest of a reading is skipped (validated as JSON, not kept).
    private enum Key: Int {
        case id, mac, name, rssiAtOneMetre, rssi, receiverAdjustment, distance, interval

        var name: String { ESPresenseReading.keys[rawValue] }
    }

    static let keys = ["id", "mac", "name", "rssi@1m", "rssi", "rxAdj", "distance", "int"]
    static let keyBytes = keys.map { Array($0.utf8) }

    /// `distance` alone, as ESPresense writes numbers (two decimals): the state of a distance sensor.
    public var distanceText: String { distance.map(Self.twoDecimals) ?? "" }

    static func twoDecimals(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        guard abs(hundredths) < 1e15 else { return value < 0 ? "-1e13" : "1e13" }
        let cents = Int64(hundredths)
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return (cents < 0 ? "-" : "") + "\(magnitude / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
