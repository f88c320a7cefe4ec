/// Reads the corpus's hex vector files (`hex<TAB>expected<TAB>source`, `#` starts a comment) and
/// keeps the lines that are complete H4 LE Meta events (`04 3e …`). The bench parses them itself
/// so that it does not depend on the Captures module.
enum HexVectors {
    /// The LE Meta events in `text`, each without its H4 packet-type byte.
    static func leMetaEvents(inFile text: String) -> [[UInt8]] {
        var events: [[UInt8]] = []
        for line in text.split(whereSeparator: \.isNewline) {
            guard let hex = line.split(separator: "\t", maxSplits: 1).first,
                let packet = bytes(fromHex: hex),
                packet.count >= 2, packet[0] == 0x04, packet[1] == 0x3E
            else { continue }
            events.append(Array(packet.dropFirst()))
        }
        return events
    }

    /// Hex digits (spaces allowed between bytes) to bytes; `nil` for anything else, so comment
    /// lines and prose are skipped rather than misread.
    static func bytes(fromHex text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for character in text.utf8 where character != UInt8(ascii: " ") {
            guard let nibble = nibble(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil && !bytes.isEmpty ? bytes : nil
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
