import Foundation

/// One name in a doc or a source comment that points at nothing.
struct StaleReference: CustomStringConvertible, Equatable {
    var file: String
    var line: Int
    var problem: String

    var description: String { "\(file):\(line): \(problem)" }
}

/// The repository as the reference check sees it: every path, and every name its code spells. The rules it
/// applies to a backticked span are in `DocReferencesTests`' comment.
struct RepositoryIndex {
    /// Names from elsewhere that our docs and comments name on purpose, by where they come from. A name of ours
    /// never belongs here: fix the doc instead.
    static let outsideNames: Set<String> = [
        // AltBeacon's android-beacon-library, which ranging is compared with (docs/ranging.md).
        "RssiFilter", "RunningAverageRssiFilter", "ArmaRssiFilter", "CurveFittedDistanceCalculator",
        "PathLossDistanceCalculator", "BeaconManager",
        // ESPresense's firmware (Fleet/ESPresense.swift).
        "BleFingerprint", "Sprintf",
        // Home Assistant's Bluetooth integration.
        "BluetoothServiceInfo",
        // BlueZ's Device1 and main.conf.
        "UUIDs", "TemporaryTimeout",
        // dbus-daemon's GetConnectionCredentials.
        "ProcessFD",
        // Linux's /proc/PID/status and systemd's resource control.
        "VmRSS", "VmHWM", "MemoryMax",
        // libFuzzer, and the Foundation split the toolchain ships.
        "LLVMFuzzerRunDriver", "LLVMFuzzerTestOneInput", "FoundationEssentials",
        // The Bluetooth Core specification's random address hash function.
        "ah",
        // An adapter's name as a pattern (hci0, hci1…).
        "hciN",
        // The delegate class docs/clients.md's Python snippet leaves to the reader.
        "MyDelegate",
    ]

    /// Paths in other trees that docs name: an app's own package (docs/clients.md) and files as installed under
    /// /usr/share/doc/beacond (docs/packaging.md).
    static let outsidePaths: Set<String> = ["Sources/door/", "examples/beacond.toml", "examples/apps.d/example.toml"]

    /// Core Location's and Foundation's names (`CLMonitor`, `NSLocationWhenInUseUsageDescription`): the model beacond
    /// follows, which docs cite throughout.
    static func isOutside(_ name: String) -> Bool {
        if outsideNames.contains(name) { return true }
        let letters = Array(name.utf8)
        return letters.count > 2 && (name.hasPrefix("CL") || name.hasPrefix("NS")) && isUpper(letters[2])
    }

    let root: URL
    /// Repository-relative paths split into components; hidden files and folders are left out, except `.ci`.
    private(set) var files: [[Substring]] = []
    private(set) var folders: [[Substring]] = []
    /// Swift files' paths without the extension too: architecture.md writes `Core/DaemonCore`.
    private(set) var swiftStems: [[Substring]] = []
    private(set) var basenames: Set<String> = []
    /// First path components (Sources, docs, .ci): a path starting with one is read from the repository root.
    private(set) var topLevel: Set<String> = []
    /// Names of folders under Sources/ (`Core`, `Scanner`, `BlueZ`): a path starting with one is a source path.
    private(set) var sourceFolders: Set<String> = []
    /// What follows `+` in an extension's file name (`DaemonCore+Scanning.swift` gives `Scanning`), as architecture.md
    /// lists a type's extensions.
    private(set) var extensionParts: Set<String> = []
    /// Every Swift file and its text (Sources, Tests, examples, Fuzzing).
    private(set) var swiftFiles: [(path: String, text: String)] = []
    /// The names Swift and Python code spell (every .swift and .py file: the client library's Python too).
    private(set) var code = CodeNames()
    /// String literals of Sources/ and Package.swift, whole (`org.beacond.Error.UnknownApp`)…
    private(set) var literals: Set<String> = []
    /// …and the parts of those that are dotted names: D-Bus members and errors, BlueZ properties, beacon kinds,
    /// targets (`UnknownApp`, `Manager1`, `ManufacturerData`, `AltBeacon`, `BeaconKit`).
    private(set) var literalNames: Set<String> = []

    init(root: URL) throws {
        self.root = root
        let manager = FileManager.default
        guard let walk = manager.enumerator(atPath: root.path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: root.path])
        }
        while let path = walk.nextObject() as? String {
            let components = path.split(separator: "/")
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isFolder) else { continue }
            if let name = components.last, name.hasPrefix("."), name != ".ci" {
                if isFolder.boolValue { walk.skipDescendants() }
                continue
            }
            topLevel.insert(String(components[0]))
            if isFolder.boolValue {
                folders.append(components)
                if components.count > 1, components[0] == "Sources" { sourceFolders.insert(String(components.last!)) }
                continue
            }
            files.append(components)
            let name = String(components.last!)
            basenames.insert(name)
            if name.hasSuffix(".py") {
                code.formUnion(CodeNames(python: try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)))
            }
            guard name.hasSuffix(".swift") else { continue }
            swiftStems.append(components.dropLast() + [components.last!.dropLast(".swift".count)])
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            swiftFiles.append((path, text))
            let names = CodeNames(swift: text)
            code.formUnion(names)
            guard components[0] == "Sources" || path == "Package.swift" else { continue }
            if let plus = name.firstIndex(of: "+") { extensionParts.insert(String(name[name.index(after: plus)...].dropLast(6))) }
            for literal in names.literals {
                // A name may be quoted inside a literal: <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" …>.
                for piece in literal.split(separator: "\"") where Self.isDottedName(piece) {
                    literals.insert(String(piece))
                    literalNames.formUnion(piece.split(whereSeparator: { $0 == "." || $0 == "/" }).map(String.init))
                }
            }
        }
        swiftFiles.sort { $0.path < $1.path }
    }

    /// `name`, `a.b.C`, `org/beacond`: a name, not a sentence.
    static func isDottedName(_ text: Substring) -> Bool {
        text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            part.split(separator: "/", omittingEmptySubsequences: false).allSatisfy(isIdentifier)
        }
    }

    static func isIdentifier(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isUpper(first) || isLower(first) || first == UInt8(ascii: "_") else { return false }
        return text.utf8.allSatisfy { isUpper($0) || isLower($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// Type, module and outside names a doc may name: whatever the code spells (a stale name has gone from the code
    /// altogether, while `Sendable` or Python's `ValueError` stay), names spelled in Sources' literals, and the
    /// folder and extension names architecture.md uses.
    func knowsTypeName(_ name: String) -> Bool {
        code.identifiers.contains(name) || literalNames.contains(name) || sourceFolders.contains(name)
            || extensionParts.contains(name)
    }

    // MARK: Paths

    /// A span read as a path: it ends in .swift, or has a `/` and starts at the repository root (`Tests/…`,
    /// `scripts/…`) or at a folder under Sources/ (`Scanner/ScanControl`). URLs, absolute paths, topics with
    /// placeholders (`beacond/<room>/…`) and file names in other trees are none of ours.
    func isPath(_ word: Substring) -> Bool {
        let components = word.split(separator: "/")
        guard let first = components.first, !word.hasPrefix("/"), !word.contains("//"),
            components.allSatisfy({ $0.utf8.allSatisfy(Self.isPathByte) })
        else { return false }
        return word.hasSuffix(".swift") || (word.contains("/") && (topLevel.contains(String(first)) || sourceFolders.contains(String(first))))
    }

    /// A path from the root must name a file or folder there; any other must be the end of one (`Scanner/ScanControl.swift`,
    /// `Core/DaemonCore`, `DaemonCore+State.swift`). `*` stands for any part of one component.
    func pathExists(_ word: Substring) -> Bool {
        if Self.outsidePaths.contains(String(word)) { return true }
        let pattern = word.split(separator: "/")
        if topLevel.contains(String(pattern[0])) {
            return (files + folders).contains { $0.count == pattern.count && zip(pattern, $0).allSatisfy(Self.matches) }
        }
        return (files + folders + swiftStems).contains { path in
            path.count >= pattern.count && zip(pattern, path.suffix(pattern.count)).allSatisfy(Self.matches)
        }
    }

    /// Shell-style `*` (any run of characters) and nothing else.
    static func matches(_ pattern: Substring, _ text: Substring) -> Bool {
        guard let star = pattern.firstIndex(of: "*") else { return pattern == text }
        let head = pattern[..<star], rest = pattern[pattern.index(after: star)...]
        guard text.hasPrefix(head) else { return false }
        var tail = text.dropFirst(head.count)
        while true {
            if matches(rest, tail) { return true }
            if tail.isEmpty { return false }
            tail = tail.dropFirst()
        }
    }

    // MARK: Checking a span

    /// What a backticked span names that does not exist, if anything. `members`: how far lowerCamelCase names are
    /// checked (see `DocReferencesTests`).
    func problem(in span: String, members: MemberCheck) -> String? {
        // A command's path: `scripts/fuzz.sh --seconds 20`.
        let word = span.prefix { $0 != " " }
        if isPath(word) {
            return pathExists(word) ? nil : "`\(word)`: no file or folder has this path (or ends in it)"
        }
        if word.hasPrefix("org.beacond.") { return busNameProblem(word) }
        guard let reference = CodeReference(span) else { return nil }
        // A reverse-DNS name, a Python or TOML dotted path (`event.diagnostic`, `org.example.Demo`): not a Swift name.
        if reference.parts.count > 1, Self.isLower(reference.parts[0].utf8.first!) { return nil }
        // A man page, `poll(2)`.
        if let arguments = reference.arguments, !arguments.isEmpty, arguments.utf8.allSatisfy(Self.isDigit) { return nil }
        for (position, part) in reference.parts.enumerated() {
            // Members of an outside type are its own; snake_case names are TOML keys or Python.
            if Self.isOutside(part) || part.contains("_") { return nil }
            let first = part.utf8.first!
            if Self.isUpper(first) {
                // All capitals (`UUID`, `RSSI`) are acronyms, not names.
                if part.utf8.contains(where: Self.isLower), !knowsTypeName(part) {
                    return "`\(part)`: no type, module or D-Bus name of this name in the code (if it is someone else's, "
                        + "add it to RepositoryIndex.outsideNames with where it comes from)"
                }
            } else if position == reference.parts.count - 1, reference.arguments != nil, members != .none {
                if !code.callables.contains(part) { return "`\(part)(…)`: no function of this name is declared or called" }
            } else if members == .all || (members == .camelCase && part.utf8.contains(where: Self.isUpper)) {
                // A JSON key such as ESPresense's `rxAdj` is spelled as a literal.
                if !code.identifiers.contains(part), !literalNames.contains(part) { return "`\(part)`: no such name in the code" }
            }
        }
        return nil
    }

    enum MemberCheck {
        /// Docs for readers of the API: their lowerCamelCase words are keys, labels and Python.
        case none
        /// Source comments: a name with a hump (`flushOutbox`) and any `name(…)`.
        case camelCase
        /// docs/architecture.md, which is about the code: every identifier, `handle` and `route` too.
        case all
    }

    /// beacond's own D-Bus names must be in Names.swift (or another literal of Sources): `org.beacond.Error.*`,
    /// an interface and a member of it, or a file named after the bus name (`org.beacond.conf`).
    func busNameProblem(_ word: Substring) -> String? {
        let name = word.prefix { $0 != "(" }
        if literals.contains(String(name)) || basenames.contains(String(name)) { return nil }
        if literals.contains(where: { Self.matches(name, Substring($0)) }) { return nil }
        if let dot = name.lastIndex(of: "."), literals.contains(String(name[..<dot])),
            literalNames.contains(String(name[name.index(after: dot)...]))
        {
            return nil
        }
        return "`\(name)`: not a D-Bus name beacond defines (Sources/BeacondAPI/Names.swift)"
    }

    static func isPathByte(_ byte: UInt8) -> Bool {
        isUpper(byte) || isLower(byte) || isDigit(byte) || "._-+*".utf8.contains(byte)
    }

    static func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
    static func isLower(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}

/// A span that is a Swift name: `DaemonCore`, `.notify(…)`, `DaemonCore.answer`, `handle(_:at:)`.
struct CodeReference {
    var parts: [String]
    /// What is between the parentheses of `name(…)`, nil when there are none.
    var arguments: Substring?

    init?(_ span: String) {
        var text = Substring(span)
        if text.hasPrefix(".") { text = text.dropFirst() }
        if let open = text.firstIndex(of: "(") {
            guard text.hasSuffix(")") else { return nil }
            arguments = text[text.index(after: open)..<text.index(before: text.endIndex)]
            text = text[..<open]
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.allSatisfy(RepositoryIndex.isIdentifier) else { return nil }
        self.parts = parts.map(String.init)
    }
}

// MARK: Where names are read

extension RepositoryIndex {
    /// docs/*.md, README.md and config/README.md.
    var documents: [String] {
        let docs = files.filter { $0.count == 2 && $0[0] == "docs" && $0[1].hasSuffix(".md") }.map { $0.joined(separator: "/") }
        return docs.sorted() + ["README.md", "config/README.md"].filter { name in files.contains { $0.joined(separator: "/") == name } }
    }

    /// Every stale reference in the documents and in the Swift files' comments.
    func staleReferences() throws -> [StaleReference] {
        var found: [StaleReference] = []
        for document in documents {
            let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            found += staleReferences(inMarkdown: text, file: document)
        }
        for (path, text) in swiftFiles { found += staleReferences(inSwiftComments: text, file: path) }
        return found
    }

    /// Backticked spans outside fenced code blocks (those are compiled and run by snippets_test.py), and relative
    /// links, which must reach a file.
    func staleReferences(inMarkdown text: String, file: String) -> [StaleReference] {
        var inFence = false
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                inFence.toggle()
                return ""
            }
            return inFence ? "" : line
        }
        let members: MemberCheck = file == "docs/architecture.md" ? .all : .none
        var found = Self.codeSpans(lines, firstLine: 1).compactMap { span in
            problem(in: span.text, members: members).map { StaleReference(file: file, line: span.line, problem: $0) }
        }
        for (number, line) in lines.enumerated() {
            for target in Self.linkTargets(line) {
                let path = target.prefix { $0 != "#" }
                guard !path.isEmpty, !path.contains(":") else { continue }
                var resolved = file.split(separator: "/").dropLast().map(String.init)
                for part in (path.removingPercentEncoding ?? String(path)).split(separator: "/") where part != "." {
                    if part == ".." { _ = resolved.popLast() } else { resolved.append(String(part)) }
                }
                if !FileManager.default.fileExists(atPath: root.appendingPathComponent(resolved.joined(separator: "/")).path) {
                    found.append(StaleReference(file: file, line: number + 1, problem: "link to `\(path)`: no such file"))
                }
            }
        }
        // By line, spans before links on one line.
        return found.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }.map(\.element)
    }

    /// `[text](target)` and `[label]: target`.
    static func linkTargets(_ line: Substring) -> [Substring] {
        var targets: [Substring] = []
        var rest = line[...]
        while let range = rest.range(of: "](") {
            let target = rest[range.upperBound...].prefix { $0 != ")" && $0 != " " }
            targets.append(target)
            rest = rest[range.upperBound...]
        }
        let trimmed = line.drop { $0 == " " }
        if trimmed.hasPrefix("["), let label = trimmed.range(of: "]: ") {
            targets.append(trimmed[label.upperBound...].prefix { $0 != " " })
        }
        return targets
    }

    /// A Swift file's comments that describe code: its first comment block (the file's or first type's header),
    /// and every `///` documentation comment.
    func staleReferences(inSwiftComments text: String, file: String) -> [StaleReference] {
        var found: [StaleReference] = []
        var block: [Substring] = []
        var blockStart = 0
        var blockIsDocumentation = false
        var seenBlock = false
        func endBlock() {
            guard !block.isEmpty else { return }
            if !seenBlock || blockIsDocumentation {
                found += Self.codeSpans(block, firstLine: blockStart).compactMap { span in
                    problem(in: span.text, members: .camelCase).map { StaleReference(file: file, line: span.line, problem: $0) }
                }
            }
            seenBlock = true
            block = []
        }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("//") else {
                endBlock()
                continue
            }
            let isDocumentation = trimmed.hasPrefix("///")
            if !block.isEmpty, isDocumentation != blockIsDocumentation { endBlock() }
            if block.isEmpty {
                blockStart = number + 1
                blockIsDocumentation = isDocumentation
            }
            let body = trimmed.drop { $0 == "/" }
            block.append(body.hasPrefix(" ") ? body.dropFirst() : body)
        }
        endBlock()
        return found
    }

    /// Code spans, CommonMark's way: a run of backticks up to the next run of as many, within one paragraph (a
    /// blank line ends it); a line break inside a span is a space. Each comes with the line it starts on.
    static func codeSpans(_ lines: [Substring], firstLine: Int) -> [(line: Int, text: String)] {
        var spans: [(line: Int, text: String)] = []
        var paragraph: [UInt8] = []
        var paragraphStart = firstLine
        func endParagraph() {
            var index = 0
            var lineOf = paragraphStart
            let bytes = paragraph
            func run(at start: Int) -> Int {
                var end = start
                while end < bytes.count, bytes[end] == UInt8(ascii: "`") { end += 1 }
                return end - start
            }
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\n") { lineOf += 1 }
                guard bytes[index] == UInt8(ascii: "`") else {
                    index += 1
                    continue
                }
                let length = run(at: index)
                var close = index + length
                var found: Int?
                while close < bytes.count {
                    if bytes[close] == UInt8(ascii: "`") {
                        let closing = run(at: close)
                        if closing == length {
                            found = close
                            break
                        }
                        close += closing
                    } else {
                        close += 1
                    }
                }
                guard let end = found else {
                    index += length
                    continue
                }
                let content = String(decoding: bytes[(index + length)..<end], as: UTF8.self)
                spans.append((lineOf, content.replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)))
                lineOf += bytes[index..<end].count { $0 == UInt8(ascii: "\n") }
                index = end + length
            }
            paragraph = []
        }
        for (offset, line) in lines.enumerated() {
            if line.allSatisfy({ $0 == " " }) {
                endParagraph()
                paragraphStart = firstLine + offset + 1
                continue
            }
            if paragraph.isEmpty { paragraphStart = firstLine + offset } else { paragraph.append(UInt8(ascii: "\n")) }
            paragraph += Array(line.utf8)
        }
        endParagraph()
        return spans
    }
}
