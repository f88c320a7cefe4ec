import BeaconKit
import TOMLKit
import BeacondCore

/// One parsed configuration file: its values, and the line of each key so every message can point at it.
///
/// TOMLKit 0.6.0 never frees the tables it parses (its `TOMLTable` has no `deinit`), so each load leaks the
/// parsed tree: a few kilobytes per file, paid once at start and once per SIGHUP reload.
struct TOMLDocument {
    let file: String
    let root: TOMLTable
    let keyLines: TOMLKeyLines

    /// Throws the parser's syntax error at its line and column.
    init(file: String, text: String) throws(ConfigurationError) {
        // The parser reads a C string: a NUL would silently end the document there (TOML forbids it anyway).
        if let nulLine = TOMLKeyLines.lines(of: text).firstIndex(where: { $0.contains("\0") }) {
            throw ConfigurationError(
                file: file, line: nulLine + 1, message: "the file contains a NUL byte",
                fix: "a TOML file is UTF-8 text; remove the NUL byte")
        }
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let position = error.source.begin
            throw ConfigurationError(
                file: file, line: position.line > 0 ? position.line : nil,
                message: "TOML syntax error at column \(position.column): \(Self.oneLine(error.description))",
                fix: "fix the syntax; the format is described at https://toml.io")
        } catch {
            throw ConfigurationError(
                file: file, line: nil, message: "cannot parse the file as TOML: \(error)",
                fix: "fix the syntax; the format is described at https://toml.io")
        }
        self.file = file
        keyLines = TOMLKeyLines(text: text)
    }

    /// The parser's message quotes the offending text, newlines included; a log line must stay one line. A quote
    /// that may hold a device's key (`0x` and 32 hex digits, unquoted) is said by its length alone: the message
    /// goes to the journal and to the admin group, not only to who may read the file.
    private static func oneLine(_ text: String) -> String {
        let parts = text.split(separator: "'", omittingEmptySubsequences: false)
        var said = ""
        for (index, part) in parts.enumerated() {
            let quoted = index % 2 == 1 && index < parts.count - 1
            if quoted, IdentityResolvingKey.mayHoldKey(part) {
                said += "a value of \(part.count) characters (not repeated: it may be a key)"
            } else {
                said += quoted ? "'\(part)'" : index % 2 == 1 ? "'\(part)" : String(part)
            }
        }
        return said.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }
            .joined()
    }

    /// A reader of the document's top level.
    var rootReader: TOMLTableReader { TOMLTableReader(document: self, table: root, path: []) }
}
