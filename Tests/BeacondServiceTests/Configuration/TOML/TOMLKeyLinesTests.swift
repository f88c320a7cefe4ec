@testable import BeacondService
@testable import BeacondCore
import Testing

/// The line finder that puts line numbers on messages (TOMLKit does not report them).
@Suite("TOML key lines")
struct TOMLKeyLinesTests {
    @Test("tables, keys, quoted and dotted keys, comments, multi-line strings and arrays, CRLF")
    func lines() {
        let text = """
            # comment = 1
            top = 1
            [authorization]   # trailing comment
            prompt = "a = b" # x = 2
            "quoted key" = 'lit'
            users = [
              "fake = 1",
              [2], { inner = 3 },
            ]
            text = \"\"\"
            hidden = 4
            \\\"\"\"still = inside
            \"\"\"
            [ monitoring . deep ]\r
            a.b.c = 5\r
            [[array]]
            element = 6
            """
        let lines = TOMLKeyLines(text: text)
        #expect(lines.line(of: ["top"]) == 2)
        #expect(lines.line(of: ["authorization"]) == 3)
        #expect(lines.line(of: ["authorization", "prompt"]) == 4)
        #expect(lines.line(of: ["authorization", "quoted key"]) == 5)
        #expect(lines.line(of: ["authorization", "users"]) == 6)
        #expect(lines.line(of: ["authorization", "text"]) == 10)
        #expect(lines.line(of: ["authorization", "hidden"]) == 3) // inside a string: falls back to the table
        #expect(lines.line(of: ["authorization", "fake"]) == 3)
        #expect(lines.line(of: ["authorization", "still"]) == 3)
        #expect(lines.line(of: ["monitoring", "deep"]) == 14)
        #expect(lines.line(of: ["monitoring", "deep", "a", "b", "c"]) == 15)
        #expect(lines.line(of: ["monitoring", "deep", "a"]) == 15)
        #expect(lines.line(of: ["array", "element"]) == 17)
        #expect(lines.line(of: ["comment"]) == nil)
        #expect(lines.line(of: ["x"]) == nil)
    }
}
