/// A 48-bit Bluetooth device address (BD_ADDR).
///
/// Stored as an integer; printed most significant byte first with colons, exactly as the
/// kernel and `bluetoothctl` print it. Addresses are for display and diagnostics only: beacon
/// identity is UUID/major/minor, never the address (phones rotate random addresses).
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 48-bit value; the least significant byte is the first byte on the air.
    public var rawValue: UInt64

    @inlinable
    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// Reads the address as HCI carries it: 6 bytes, least significant first.
    @inlinable
    public init(littleEndianBytes bytes: Span<UInt8>, at offset: Int) {
        var value: UInt64 = 0
        for index in (0..<6).reversed() {
            value = (value << 8) | UInt64(bytes[offset + index])
        }
        self.rawValue = value
    }

    /// Parses `A4:C1:38:BF:6F:AB` (case-insensitive).
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            // UInt8(_:radix:) accepts a sign ("+1"), which is not a hex digit pair.
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let byte = UInt8(part, radix: 16) else { return nil }
            value = (value << 8) | UInt64(byte)
        }
        self.rawValue = value
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        let digits = Array("0123456789ABCDEF")
        var text = ""
        text.reserveCapacity(17)
        for shift in stride(from: 40, through: 0, by: -8) {
            let byte = Int((rawValue >> UInt64(shift)) & 0xFF)
            if shift != 40 { text.append(":") }
            text.append(digits[byte >> 4])
            text.append(digits[byte & 0xF])
        }
        return text
    }
}
