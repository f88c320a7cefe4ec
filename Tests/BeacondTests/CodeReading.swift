/// Swift and Python source read as far as the reference check needs: the identifiers the code spells, which of
/// them are called or declared as functions, and the text of string literals. Comments and string literals are
/// no code here, so a name that lives on only in a comment does not count as existing.
struct CodeNames {
    /// Every identifier outside comments and string literals.
    var identifiers: Set<String> = []
    /// Identifiers written `name(` (a call, a case with a payload, a closure parameter called) or after `func`.
    var callables: Set<String> = []
    /// Each string literal's text; an interpolation is left as U+0001, so "a\(x)b" never reads as "ab".
    var literals: [String] = []

    mutating func formUnion(_ other: CodeNames) {
        identifiers.formUnion(other.identifiers)
        callables.formUnion(other.callables)
        literals += other.literals
    }

    init() {}

    init(swift text: String) {
        var reader = SwiftReader(bytes: Array(text.utf8))
        reader.code(nested: false, into: &self)
    }

    init(python text: String) {
        var reader = PythonReader(bytes: Array(text.utf8))
        reader.read(into: &self)
    }
}

private func isIdentifierStart(_ byte: UInt8) -> Bool {
    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
}

private func isIdentifierByte(_ byte: UInt8) -> Bool {
    isIdentifierStart(byte) || (byte >= 0x30 && byte <= 0x39)
}

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), hash = UInt8(ascii: "#")
private let slash = UInt8(ascii: "/"), star = UInt8(ascii: "*"), newline = UInt8(ascii: "\n")

private struct SwiftReader {
    let bytes: [UInt8]
    var index = 0

    func byte(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    mutating func identifier() -> String {
        let start = index
        while let byte = byte(), isIdentifierByte(byte) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Code up to the end, or, inside an interpolation, up to its closing parenthesis.
    mutating func code(nested: Bool, into names: inout CodeNames) {
        var depth = 0
        var previous = ""
        while let byte = byte() {
            if byte == slash, self.byte(1) == slash {
                while let next = self.byte(), next != newline { index += 1 }
            } else if byte == slash, self.byte(1) == star {
                blockComment()
            } else if byte == quote || (byte == hash && rawStringAhead()) {
                names.literals.append(string(into: &names))
                previous = ""
            } else if isIdentifierStart(byte) || (byte == UInt8(ascii: "`") && self.byte(1).map(isIdentifierStart) == true) {
                let quoted = byte == UInt8(ascii: "`")
                if quoted { index += 1 }
                let name = identifier()
                if quoted, self.byte() == UInt8(ascii: "`") { index += 1 }
                names.identifiers.insert(name)
                if previous == "func" || self.byte() == UInt8(ascii: "(") { names.callables.insert(name) }
                previous = name
            } else if byte >= 0x30 && byte <= 0x39 {
                while let next = self.byte(), isIdentifierByte(next) { index += 1 }
                previous = ""
            } else {
                index += 1
                if byte == UInt8(ascii: "(") {
                    depth += 1
                } else if byte == UInt8(ascii: ")") {
                    if nested, depth == 0 { return }
                    depth -= 1
                }
                if byte != UInt8(ascii: " "), byte != newline { previous = "" }
            }
        }
    }

    /// Swift's block comments nest.
    mutating func blockComment() {
        var depth = 0
        while let byte = byte() {
            if byte == slash, self.byte(1) == star {
                depth += 1
                index += 2
            } else if byte == star, self.byte(1) == slash {
                depth -= 1
                index += 2
                if depth == 0 { return }
            } else {
                index += 1
            }
        }
    }

    func rawStringAhead() -> Bool {
        var offset = 0
        while byte(offset) == hash { offset += 1 }
        return byte(offset) == quote
    }

    /// A string literal, `"…"`, `"""…"""` or raw (`#"…"#`), from its opening delimiter; interpolations are read as
    /// code.
    mutating func string(into names: inout CodeNames) -> String {
        var hashes = 0
        while byte() == hash {
            hashes += 1
            index += 1
        }
        let multiline = byte(1) == quote && byte(2) == quote
        index += multiline ? 3 : 1
        var text: [UInt8] = []
        while let byte = byte() {
            if byte == quote, !multiline || (self.byte(1) == quote && self.byte(2) == quote), closes(after: multiline ? 3 : 1, hashes) {
                index += (multiline ? 3 : 1) + hashes
                break
            }
            if byte == newline, !multiline { break }
            if byte == backslash, escapes(hashes) {
                index += 1 + hashes
                if self.byte() == UInt8(ascii: "(") {
                    index += 1
                    code(nested: true, into: &names)
                    text.append(1)
                } else if let escaped = self.byte() {
                    text.append(escaped)
                    index += 1
                }
                continue
            }
            text.append(byte)
            index += 1
        }
        return String(decoding: text, as: UTF8.self)
    }

    func closes(after length: Int, _ hashes: Int) -> Bool {
        (0..<hashes).allSatisfy { byte(length + $0) == hash }
    }

    func escapes(_ hashes: Int) -> Bool {
        (0..<hashes).allSatisfy { byte(1 + $0) == hash }
    }
}

private struct PythonReader {
    let bytes: [UInt8]
    var index = 0

    func byte(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    mutating func read(into names: inout CodeNames) {
        let apostrophe = UInt8(ascii: "'")
        while let byte = byte() {
            if byte == hash {
                while let next = self.byte(), next != newline { index += 1 }
            } else if byte == quote || byte == apostrophe {
                names.literals.append(string(byte))
            } else if isIdentifierStart(byte) {
                let start = index
                while let next = self.byte(), isIdentifierByte(next) { index += 1 }
                let name = String(decoding: bytes[start..<index], as: UTF8.self)
                // f"…", r'…', b"…": a prefix, not a name.
                if let next = self.byte(), next == quote || next == apostrophe, name.count <= 2 { continue }
                names.identifiers.insert(name)
                if self.byte() == UInt8(ascii: "(") { names.callables.insert(name) }
            } else {
                index += 1
            }
        }
    }

    mutating func string(_ delimiter: UInt8) -> String {
        let triple = byte(1) == delimiter && byte(2) == delimiter
        index += triple ? 3 : 1
        let start = index
        while let byte = byte() {
            if byte == backslash {
                index += 2
                continue
            }
            if byte == delimiter, !triple || (self.byte(1) == delimiter && self.byte(2) == delimiter) {
                let text = String(decoding: bytes[start..<index], as: UTF8.self)
                index += triple ? 3 : 1
                return text
            }
            if byte == newline, !triple { break }
            index += 1
        }
        return String(decoding: bytes[start..<min(index, bytes.count)], as: UTF8.self)
    }
}
