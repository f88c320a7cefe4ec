/// Why a file could not be read as a capture at all. Problems inside a readable capture (a truncated
/// last record, lengths that disagree) are not errors: they are counted in `Capture.malformedRecords`.
public struct CaptureError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Error, Sendable, Hashable {
        /// The file could not be read; the text is the system's (errno) explanation.
        case unreadable(String)
        case empty
        /// No known magic number and not hex text; keeps the first bytes to show what it was.
        case notACapture(firstBytes: [UInt8])
        /// Hex text, but not one line is an H4 HCI event: advertising data or some other dump.
        case noHCIEventLines(firstLineBytes: [UInt8])
        /// The magic matched but the file ends inside its header (`header`: "btsnoop file",
        /// "pcapng section", …).
        case truncatedHeader(header: String, needed: Int, available: Int)
        /// The magic matched but the header contradicts itself (pcapng byte-order magic).
        case corruptHeader(format: String, detail: String)
        case unsupportedVersion(format: String, version: String)
        /// `kind` is "btsnoop datalink", "pcap link type" or "pcapng link type"; `found` lists what
        /// the file declares, `supported` names what this module reads.
        case unsupportedLinkType(kind: String, found: [UInt32], supported: String)
    }

    /// The file as the caller named it.
    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

extension CaptureError.Reason: CustomStringConvertible {
    /// How many leading bytes `notACapture` keeps and shows.
    static let shownByteCount = 16

    public var description: String {
        switch self {
        case .unreadable(let why):
            return "cannot read file: \(why)"
        case .empty:
            return "empty file (0 bytes), not a capture"
        case .notACapture(let bytes):
            return "not a capture file: starts with \(Self.hex(bytes)) (\"\(Self.printable(bytes))\"); "
                + "expected btsnoop (\"btsnoop\\0\"), pcap (A1 B2 C3 D4 or A1 B2 3C 4D, either byte order), "
                + "pcapng (0A 0D 0D 0A) or text with one hex HCI event per line"
        case .noHCIEventLines(let bytes):
            return "hex text, but no line is an H4 HCI event (first data line starts \(Self.hex(bytes))); "
                + "a text capture needs one event per line starting 04, such as \"04 3e 2a 02 01 …\""
        case .truncatedHeader(let header, let needed, let available):
            return "\(header) header truncated: needs \(needed) bytes, has \(available)"
        case .corruptHeader(let format, let detail):
            return "corrupt \(format) header: \(detail)"
        case .unsupportedVersion(let format, let version):
            return "unsupported \(format) version \(version)"
        case .unsupportedLinkType(let kind, let found, let supported):
            let list = found.map(String.init).joined(separator: ", ")
            return "unsupported \(kind) \(list); supported: \(supported)"
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0xF)]]) }.joined(separator: " ")
    }

    /// ASCII as is, everything else as `.` (what `xxd` shows), so the message stays one clean line.
    static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.map { (0x20..<0x7F).contains($0) && $0 != 0x22 ? $0 : 0x2E }, as: UTF8.self)
    }
}
