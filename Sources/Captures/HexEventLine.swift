/// One line of a live hex feed (the `fifo:` scanner): one H4 HCI event in hex, as in replay's text format,
/// checked as far as the HCI framing goes, with a reason fit for a line of a stream (not for a file).
public enum HexEventLine {
    public enum Outcome: Equatable, Sendable {
        /// Blank or a `#` comment.
        case skip
        /// The HCI event without its H4 type byte (event code, parameter length, parameters).
        case event([UInt8])
        case malformed(String)
    }

    /// `line` without its newline. A TAB ends the hex (the corpus files' expectations follow it).
    public static func parse(_ line: [UInt8]) -> Outcome {
        let text = line.span
        guard let field = HexLinesReader.hexField(text, 0..<text.count) else { return .skip }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(field.count / 2)
        guard HexLinesReader.decodeHex(text, field, into: &bytes) else {
            var digits = 0
            for index in field where text[index] != HexLinesReader.space {
                guard HexLinesReader.hexValue(text[index]) != nil else {
                    return .malformed(
                        "not hex (character \(CaptureError.Reason.hex([text[index]])) at column "
                            + "\(index + 1)); a line is one H4 HCI event as hex bytes, e.g. \"04 3e 2a 02 01 …\"")
                }
                digits += 1
            }
            return .malformed(
                digits % 2 == 1
                    ? "odd number of hex digits (\(digits))"
                    : "a hex byte split by a space; write two digits per byte")
        }
        guard bytes.first == PacketEncoding.h4EventType else {
            return .malformed(
                "not an HCI event (an H4 event line starts with 04, this one with "
                    + "\(CaptureError.Reason.hex([bytes[0]])))")
        }
        let event = Array(bytes.dropFirst())
        guard event.count >= 2 else {
            return .malformed(
                "HCI event too short (\(event.count) byte\(event.count == 1 ? "" : "s") after 04; "
                    + "an event has at least an event code and a parameter length)")
        }
        let declared = Int(event[1])
        guard declared == event.count - 2 else {
            return .malformed(
                "HCI event length mismatch (its header says \(declared) parameter bytes, the line has "
                    + "\(event.count - 2))")
        }
        return .event(event)
    }
}
