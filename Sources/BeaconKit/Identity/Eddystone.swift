public import Foundation

/// An Eddystone-UID namespace: 10 bytes, written as 20 hex digits (Eddystone's protocol specification).
public struct EddystoneNamespace: Hashable, Sendable, CustomStringConvertible {
    /// The 10 bytes, first byte most significant.
    public var bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 10 else { return nil }
        self.bytes = bytes
    }

    /// The first 10 bytes of an identity's 16.
    public init(identityBytes uuid: UUID) { self.init(uuid) }

    init(_ uuid: UUID) {
        let all = uuid.byteArray
        bytes = Array(all[0..<10])
    }

    /// 20 hex digits, either case; an optional `0x` prefix.
    public init?(hex text: String) {
        guard let bytes = HexBytes.parse(text), bytes.count == 10 else { return nil }
        self.bytes = bytes
    }

    /// The identity's 16 bytes: this namespace, then `instance` (zeros for a namespace-only constraint).
    func uuid(instance: EddystoneInstance?) -> UUID {
        UUID(byteArray: bytes + (instance?.bytes ?? [0, 0, 0, 0, 0, 0]))
    }

    /// Lowercase hex, as Eddystone's tools print it.
    public var description: String { HexBytes.lowercase(bytes) }
}

/// An Eddystone-UID instance: 6 bytes, written as 12 hex digits.
public struct EddystoneInstance: Hashable, Sendable, CustomStringConvertible {
    public var bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    init(_ uuid: UUID) { bytes = Array(uuid.byteArray[10..<16]) }

    /// The last 6 bytes of an identity's 16.
    public init(identityBytes uuid: UUID) { self.init(uuid) }

    public init?(hex text: String) {
        guard let bytes = HexBytes.parse(text), bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    public var description: String { HexBytes.lowercase(bytes) }
}

/// What an Eddystone-TLM frame (unencrypted, version 0) reports: attached to the beacon heard from the same address.
public struct EddystoneTelemetry: Hashable, Sendable {
    /// Battery voltage in millivolts; nil when the beacon reports 0 (not supported, or not battery powered).
    public var batteryMillivolts: UInt16?
    /// Beacon temperature in °C (signed 8.8 fixed point on the air); nil when the beacon reports -128 °C (0x8000).
    public var temperature: Double?
    /// Advertising PDUs sent since power-on or reboot.
    public var advertisingCount: UInt32
    /// Time since power-on or reboot, in 0.1 s.
    public var uptimeTenths: UInt32

    public init(batteryMillivolts: UInt16?, temperature: Double?, advertisingCount: UInt32, uptimeTenths: UInt32) {
        self.batteryMillivolts = batteryMillivolts
        self.temperature = temperature
        self.advertisingCount = advertisingCount
        self.uptimeTenths = uptimeTenths
    }
}

/// Hex text ↔ bytes for identities and keys.
public enum HexBytes {
    /// Hex digit pairs, either case, with an optional `0x` prefix and optional `-`/`:`/space separators between pairs.
    public static func parse(_ text: String) -> [UInt8]? {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in digits.utf8 {
            if character == UInt8(ascii: "-") || character == UInt8(ascii: ":") || character == UInt8(ascii: " ") {
                guard high == nil else { return nil }
                continue
            }
            guard let value = digit(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return high == nil && !bytes.isEmpty ? bytes : nil
    }

    public static func isDigit(_ character: UInt8) -> Bool { digit(character) != nil }

    static func digit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }
}

extension UUID {
    /// The 16 bytes in order.
    public var byteArray: [UInt8] {
        let u = uuid
        return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
    }

    /// A UUID of exactly 16 bytes.
    public init(byteArray b: [UInt8]) {
        precondition(b.count == 16, "a UUID is 16 bytes")
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
