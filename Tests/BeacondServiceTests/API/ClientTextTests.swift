import BeacondService
import BeacondCore
import Testing

/// Client text inside a message: quoted, control characters escaped, cut.
@Suite("Client text in messages")
struct ClientTextTests {
    @Test func escapesControlCharactersQuotesAndBackslashes() {
        #expect(ClientText.quoted("lobby") == "'lobby'")
        #expect(ClientText.quoted("a\u{1B}[31mb") == "'a\\u{1B}[31mb'")
        #expect(ClientText.quoted("a\u{7F}\u{85}\u{9F}b") == "'a\\u{7F}\\u{85}\\u{9F}b'")
        #expect(ClientText.quoted("tab\there\nnew\rcr") == "'tab\\there\\nnew\\rcr'")
        #expect(ClientText.quoted("it's a\\b") == "'it\\'s a\\\\b'")
        #expect(ClientText.quoted("café ✓") == "'café ✓'")
    }

    @Test func cutsLongText() {
        #expect(ClientText.quoted(String(repeating: "x", count: 100), limit: 5) == "'xxxxx…'")
        #expect(ClientText.quoted("xxxxx", limit: 5) == "'xxxxx'")
    }

    @Test func findsTheFirstControlCharacter() {
        #expect(ClientText.firstControl(in: "ok") == nil)
        #expect(ClientText.firstControl(in: "a\u{85}b\u{1B}") == "\u{85}")
        #expect(ClientText.firstControl(in: "\u{A0}nbsp") == nil)
    }
}
