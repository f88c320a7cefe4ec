import Captures
import Testing

/// A live feed's line: checked as far as HCI framing goes, with a reason fit for a line of a stream.
@Suite("Hex event lines of a live feed")
struct HexEventLineTests {
    func parse(_ text: String) -> HexEventLine.Outcome { HexEventLine.parse(Array(text.utf8)) }

    @Test func readsAnEventWithOrWithoutSpaces() {
        #expect(parse("04 0e 01 00") == .event([0x0E, 0x01, 0x00]))
        #expect(parse("  040e0100\r") == .event([0x0E, 0x01, 0x00]))
        #expect(parse("04 0e 01 00\tinside: comment") == .event([0x0E, 0x01, 0x00]))
    }

    @Test func skipsBlankAndCommentLines() {
        #expect(parse("") == .skip)
        #expect(parse("   ") == .skip)
        #expect(parse("# 04 3e") == .skip)
    }

    @Test(arguments: [
        ("hello", "not hex"), ("04 3e 0", "odd number of hex digits"), ("04 3e 0 1", "split by a space"),
        ("02 00 01", "not an HCI event (an H4 event line starts with 04, this one with 02)"),
        ("04", "HCI event too short"), ("04 3e", "HCI event too short"),
        ("04 3e 05 02 01", "HCI event length mismatch (its header says 5 parameter bytes, the line has 2)"),
    ])
    func saysWhyALineIsDropped(_ line: String, _ reason: String) {
        guard case .malformed(let text) = parse(line) else {
            Issue.record("\(line) was not refused")
            return
        }
        #expect(text.contains(reason), "\(text)")
        #expect(!text.contains("capture"), "\(text)")
    }
}
