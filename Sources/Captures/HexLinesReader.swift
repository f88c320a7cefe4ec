/// Reads text with one H4 HCI event in hex per line (`04 3e 2a 02 …` or `043e2a02…`), the shape of
/// the corpus vector files. `#` starts a comment line, a TAB ends the hex (expectations and
/// sources follow it there), blank lines are skipped. Other lines (not hex, or hex that is not an
/// H4 event) are counted malformed under their line number.
enum HexLinesReader {
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let tab = UInt8(ascii: "\t")
    static let space = UInt8(ascii: " ")
    static let comment = UInt8(ascii: "#")

    /// Frames lines as they arrive: complete lines only, the last one at the end. The line count, whether a data
    /// line was seen and how many events were framed carry across calls.
    struct Framer {
        var lineNumber = 0
        var sawData = false
        var firstLine: [UInt8] = []
        var events = 0
        /// A line over `CaptureFramer.largestRecord` bytes was counted malformed: as for a binary format's
        /// oversized record, nothing after it is read (an endless line would otherwise be read for ever).
        var stopped = false
        /// Bytes of blank and comment lines before the first data line.
        var preamble = 0
        /// A capture's comments before its first event are a few lines: text or a stream with no event line in its
        /// first mebibyte (an endless comment, `/dev/zero`) is no capture, and is not read on for ever.
        static let longestPreamble = 1 << 20

        /// Appends the events of the complete lines of `text` to `decoded` (their records index it). Returns how
        /// many bytes were framed, or nil when the first line that is neither blank nor a comment is not hex:
        /// then the input is not hex lines at all (a text document, a binary file), rather than hex lines with
        /// errors.
        mutating func frame(
            _ text: Span<UInt8>, atEnd: Bool, decoded: inout [UInt8],
            into builder: inout RecordBuilder
        ) -> Int? {
            var lineStart = 0
            while lineStart < text.count, !stopped {
                var lineEnd = lineStart
                while lineEnd < text.count, text[lineEnd] != newline { lineEnd += 1 }
                if !sawData {
                    // Before the first event: a control character (a binary file, `/dev/zero`) or a long preamble
                    // is no text capture.
                    for index in lineStart..<lineEnd where text[index] < space && text[index] != tab && text[index] != carriageReturn {
                        return nil
                    }
                    guard preamble + lineEnd - lineStart < Self.longestPreamble else { return nil }
                }
                guard lineEnd < text.count || atEnd else {
                    guard lineEnd - lineStart > CaptureFramer.largestRecord else { return lineStart }
                    lineNumber += 1
                    builder.reject(
                        "line \(lineNumber)",
                        "longer than the longest line beacond reads (\(CaptureFramer.largestRecord) bytes); the rest is not read")
                    stopped = true
                    return text.count
                }
                lineNumber += 1
                let field = hexField(text, lineStart..<lineEnd)
                if field == nil, !sawData { preamble += lineEnd + 1 - lineStart }
                lineStart = lineEnd + 1
                guard let field else { continue }
                let label = "line \(lineNumber)"
                let mark = decoded.count
                guard decodeHex(text, field, into: &decoded) else {
                    guard sawData else { return nil }
                    decoded.removeSubrange(mark...)
                    builder.reject(label, "not hex")
                    continue
                }
                if !sawData { firstLine = Array(decoded[mark...].prefix(CaptureError.Reason.shownByteCount)) }
                sawData = true
                guard decoded[mark] == PacketEncoding.h4EventType else {
                    builder.reject(label, "not an H4 event (first byte \(CaptureError.Reason.hex([decoded[mark]])), expected 04)")
                    decoded.removeSubrange(mark...)
                    continue
                }
                events += 1
                builder.records.append(
                    CaptureRecord(
                        number: lineNumber, timestamp: nil, packet: .hciEvent,
                        payload: (mark + 1)..<decoded.count))
            }
            return text.count
        }

        /// At the end: nil when no line held data (not a capture); hex in which no line is an H4 event is no
        /// capture either (that error says so).
        func finish() throws(CaptureError.Reason) -> Bool {
            guard sawData else { return false }
            guard events > 0 else { throw .noHCIEventLines(firstLineBytes: firstLine) }
            return true
        }
    }

    /// The hex part of a line (before any TAB, without surrounding spaces or a trailing CR), or
    /// nil for blank and comment lines.
    static func hexField(_ text: Span<UInt8>, _ line: Range<Int>) -> Range<Int>? {
        var start = line.lowerBound
        var end = line.lowerBound
        while end < line.upperBound, text[end] != tab { end += 1 }
        while start < end, text[start] == space || text[start] == carriageReturn { start += 1 }
        while end > start, text[end - 1] == space || text[end - 1] == carriageReturn { end -= 1 }
        guard start < end, text[start] != comment else { return nil }
        return start..<end
    }

    /// Appends the bytes of `field` to `output`: pairs of hex digits, spaces allowed between bytes
    /// (not inside one). False, with `output` partly appended, when the field is anything else.
    static func decodeHex(_ text: Span<UInt8>, _ field: Range<Int>, into output: inout [UInt8]) -> Bool {
        var high: UInt8?
        for index in field {
            let character = text[index]
            if character == space {
                guard high == nil else { return false }
                continue
            }
            guard let value = hexValue(character) else { return false }
            if let pending = high {
                output.append(pending << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return high == nil
    }

    static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
