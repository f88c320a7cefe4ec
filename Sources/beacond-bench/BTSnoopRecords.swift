/// Reads btsnoop files with datalink 1002 (HCI UART, H4) and keeps the LE Meta events.
///
/// Layout (RFC 1761 "snoop" as adapted by BlueZ and Android): a 16-byte header `btsnoop\0`,
/// version (4, big-endian), datalink (4); then records of original length (4), included length
/// (4), flags (4), cumulative drops (4), timestamp (8), all big-endian, followed by the packet.
/// The bench reads the file itself so that it does not depend on the Captures module.
enum BTSnoopRecords {
    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    static let magic: [UInt8] = Array("btsnoop\0".utf8)
    static let h4Datalink: UInt32 = 1002
    static let fileHeaderLength = 16
    static let recordHeaderLength = 24

    /// Every record whose H4 packet starts `04 3e`, without the H4 packet-type byte.
    static func leMetaEvents(in file: [UInt8]) throws -> [[UInt8]] {
        let bytes = file.span
        guard bytes.count >= fileHeaderLength,
            (0..<magic.count).allSatisfy({ bytes[$0] == magic[$0] })
        else {
            throw FormatError(description: "not a btsnoop file")
        }
        let datalink = bigEndianUInt32(bytes, at: 12)
        guard datalink == h4Datalink else {
            throw FormatError(description: "btsnoop datalink \(datalink), the bench reads only \(h4Datalink) (H4)")
        }
        var events: [[UInt8]] = []
        var offset = fileHeaderLength
        while offset + recordHeaderLength <= bytes.count {
            let included = Int(bigEndianUInt32(bytes, at: offset + 4))
            let packetStart = offset + recordHeaderLength
            guard packetStart + included <= bytes.count else {
                throw FormatError(description: "record at byte \(offset) runs past the end of the file")
            }
            if included >= 2, bytes[packetStart] == 0x04, bytes[packetStart + 1] == 0x3E {
                events.append(Array(file[(packetStart + 1)..<(packetStart + included)]))
            }
            offset = packetStart + included
        }
        return events
    }

    private static func bigEndianUInt32(_ bytes: Span<UInt8>, at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(bytes[offset + $1]) }
    }
}
