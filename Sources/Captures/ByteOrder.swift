/// Byte order of a capture's header and record fields: btsnoop is always big-endian; pcap and
/// pcapng use the writer's host order, told apart by their magic numbers.
///
/// Callers check bounds before reading; these only assemble bytes.
enum ByteOrder: Sendable {
    case bigEndian
    case littleEndian

    @inline(__always)
    func uint16(_ bytes: Span<UInt8>, at offset: Int) -> UInt16 {
        let first = UInt16(bytes[offset])
        let second = UInt16(bytes[offset + 1])
        return self == .bigEndian ? first << 8 | second : second << 8 | first
    }

    @inline(__always)
    func uint32(_ bytes: Span<UInt8>, at offset: Int) -> UInt32 {
        let first = UInt32(uint16(bytes, at: offset))
        let second = UInt32(uint16(bytes, at: offset + 2))
        return self == .bigEndian ? first << 16 | second : second << 16 | first
    }

    @inline(__always)
    func uint64(_ bytes: Span<UInt8>, at offset: Int) -> UInt64 {
        let first = UInt64(uint32(bytes, at: offset))
        let second = UInt64(uint32(bytes, at: offset + 4))
        return self == .bigEndian ? first << 32 | second : second << 32 | first
    }
}

extension Span<UInt8> {
    /// True when the bytes at `offset` are `prefix`; false (not a trap) when they run past the end.
    func hasBytes(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
        guard offset >= 0, count - offset >= prefix.count else { return false }
        for index in prefix.indices where self[offset + index] != prefix[index] { return false }
        return true
    }
}
