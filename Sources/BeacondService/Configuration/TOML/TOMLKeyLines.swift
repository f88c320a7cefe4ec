import BeacondCore

/// The line on which each table and key of a TOML document is written.
///
/// TOMLKit 0.6.0 does not expose source positions of parsed nodes (toml++ keeps them, but TOMLKit's C shim only
/// passes positions out in parse errors), so this does a small scan of the text of a document that already
/// parsed: it follows `[table]` and `[[table]]` headers and `key = value` lines (bare, quoted and dotted keys),
/// skipping comments, the inside of strings (multi-line ones too) and the continuation lines of multi-line
/// arrays. Inline-table members are not recorded; `line(of:)` then answers with the line of the nearest
/// enclosing key or table. It serves messages only: a miss gives a message without a line, never a wrong value.
struct TOMLKeyLines {
    private var lines: [[String]: Int] = [:]

    init(text: String) {
        var scanner = LineScanner()
        var table: [String] = []
        for (index, line) in Self.lines(of: text).enumerated() {
            let number = index + 1
            if scanner.isContinuing {
                scanner.scanValue(line[...])
                continue
            }
            var rest = line.drop(while: \.isTOMLWhitespace)
            if rest.first == "[" {
                let isArrayTable = rest.hasPrefix("[[")
                rest = rest.dropFirst(isArrayTable ? 2 : 1)
                guard let path = Self.parseKey(&rest) else { continue }
                table = path
                record(path, line: number)
            } else if let path = Self.parseKey(&rest), rest.first == "=" {
                for end in 1...path.count { record(table + path[..<end], line: number) }
                scanner.scanValue(rest.dropFirst())
            }
        }
    }

    /// Lines as TOML (and toml++'s error positions) count them: ended by LF or CRLF. A Swift `Character`
    /// holds CRLF as one grapheme, so both are separators.
    static func lines(of text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    }

    /// The line of `path` (table names then key), or of its nearest enclosing table or key that was found.
    func line(of path: [String]) -> Int? {
        var path = path
        while !path.isEmpty {
            if let line = lines[path] { return line }
            path.removeLast()
        }
        return nil
    }

    /// The first mention wins: TOML forbids defining a key twice, and a table is first named where it starts.
    private mutating func record(_ path: [String], line: Int) {
        if lines[path] == nil { lines[path] = line }
    }

    /// Reads `a.b."c d".'e'` and the whitespace after it; nil when the text is not a key.
    private static func parseKey(_ text: inout Substring) -> [String]? {
        var parts: [String] = []
        while true {
            text = text.drop(while: \.isTOMLWhitespace)
            guard let part = parseKeyPart(&text) else { return nil }
            parts.append(part)
            text = text.drop(while: \.isTOMLWhitespace)
            guard text.first == "." else { return parts }
            text = text.dropFirst()
        }
    }

    private static func parseKeyPart(_ text: inout Substring) -> String? {
        switch text.first {
        case "\"":
            var part = ""
            var escaped = false
            for (offset, character) in text.dropFirst().enumerated() {
                if escaped {
                    part.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    text = text.dropFirst(offset + 2)
                    return part
                } else {
                    part.append(character)
                }
            }
            return nil
        case "'":
            let body = text.dropFirst()
            guard let end = body.firstIndex(of: "'") else { return nil }
            text = body[body.index(after: end)...]
            return String(body[..<end])
        default:
            let bare = text.prefix(while: \.isTOMLBareKeyCharacter)
            guard !bare.isEmpty else { return nil }
            text = text.dropFirst(bare.count)
            return String(bare)
        }
    }
}

/// Follows a value across lines: open multi-line strings and open brackets of multi-line arrays.
private struct LineScanner {
    private enum MultilineString { case basic, literal }
    private var openString: MultilineString?
    private var bracketDepth = 0

    /// Whether the next line still belongs to the current value.
    var isContinuing: Bool { openString != nil || bracketDepth > 0 }

    mutating func scanValue(_ text: Substring) {
        var rest = text
        while let character = rest.first {
            if let open = openString {
                let closing = open == .basic ? "\"\"\"" : "'''"
                if open == .basic, character == "\\" {
                    rest = rest.dropFirst(2)
                } else if rest.hasPrefix(closing) {
                    openString = nil
                    rest = rest.dropFirst(3)
                } else {
                    rest = rest.dropFirst()
                }
                continue
            }
            switch character {
            case "#":
                return
            case "\"" where rest.hasPrefix("\"\"\""):
                openString = .basic
                rest = rest.dropFirst(3)
            case "'" where rest.hasPrefix("'''"):
                openString = .literal
                rest = rest.dropFirst(3)
            case "\"":
                rest = Self.afterSingleLineString(rest.dropFirst(), quote: "\"", escapes: true)
            case "'":
                rest = Self.afterSingleLineString(rest.dropFirst(), quote: "'", escapes: false)
            case "[", "{":
                bracketDepth += 1
                rest = rest.dropFirst()
            case "]", "}":
                bracketDepth = max(0, bracketDepth - 1)
                rest = rest.dropFirst()
            default:
                rest = rest.dropFirst()
            }
        }
    }

    private static func afterSingleLineString(_ text: Substring, quote: Character, escapes: Bool) -> Substring {
        var rest = text
        while let character = rest.first {
            if escapes, character == "\\" {
                rest = rest.dropFirst(2)
            } else if character == quote {
                return rest.dropFirst()
            } else {
                rest = rest.dropFirst()
            }
        }
        return rest
    }
}

extension Character {
    fileprivate var isTOMLWhitespace: Bool { self == " " || self == "\t" || self == "\r" }

    /// TOML 1.0 bare keys: ASCII letters, digits, `_` and `-`.
    fileprivate var isTOMLBareKeyCharacter: Bool {
        isASCII && (isLetter || isNumber || self == "_" || self == "-")
    }
}
