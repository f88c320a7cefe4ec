import TOMLKit
import BeacondCore

/// Reads the keys of one table with the types the daemon expects, and remembers which keys it read so the
/// rest can be reported as unknown.
///
/// Every failure names the file, the key's line, the key, what it holds and what it should hold.
struct TOMLTableReader {
    let document: TOMLDocument
    let table: TOMLTable
    /// Table names from the top level: `[]` for the top level itself, `["authorization"]` for `[authorization]`.
    let path: [String]
    /// The keys asked for, in the order asked, which is also the order known keys are listed in messages.
    private(set) var knownKeys: [String] = []

    init(document: TOMLDocument, table: TOMLTable, path: [String]) {
        self.document = document
        self.table = table
        self.path = path
    }

    /// The line `key` of this table is written on.
    func line(of key: String) -> Int? { document.keyLines.line(of: path + [key]) }

    /// An error about `key` at its line.
    func error(_ key: String, _ message: String, fix: String? = nil) -> ConfigurationError {
        ConfigurationError(file: document.file, line: line(of: key), message: message, fix: fix)
    }

    mutating func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = read(key) else { return nil }
        guard let bool = value.bool else {
            throw typeError(key, value, expected: "a boolean", fix: "write \(key) = true or \(key) = false")
        }
        return bool
    }

    mutating func string(_ key: String, example: String) throws(ConfigurationError) -> String? {
        guard let value = read(key) else { return nil }
        guard let string = value.string else {
            throw typeError(key, value, expected: "a string", fix: "write it in quotes, e.g. \(key) = \"\(example)\"")
        }
        return string
    }

    /// A string whose value is never repeated (a device's key): a wrong type is said by its type alone, `subject`
    /// naming what it is.
    mutating func secretString(_ key: String, subject: String, example: String) throws(ConfigurationError) -> String? {
        guard let value = read(key) else { return nil }
        guard let string = value.string else {
            throw error(
                key, "\(subject) is \(Self.typeName(value.type)), but must be a string",
                fix: "write it in quotes, e.g. alice-phone = \"\(example)\"")
        }
        return string
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value = read(key) else { return nil }
        guard let integer = value.int else {
            throw typeError(
                key, value, expected: "an integer",
                fix: "write a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        guard range.contains(integer) else {
            throw error(
                key, "\(key) = \(integer) is out of range",
                fix: "write a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return integer
    }

    /// An integer or a floating-point number (TOML keeps them apart; `30` and `30.0` both mean thirty).
    mutating func number(_ key: String, example: String) throws(ConfigurationError) -> Double? {
        guard let value = read(key) else { return nil }
        if let integer = value.int { return Double(integer) }
        guard let double = value.double else {
            throw typeError(key, value, expected: "a number", fix: "write e.g. \(key) = \(example)")
        }
        return double
    }

    mutating func stringArray(_ key: String, example: String) throws(ConfigurationError) -> [String]? {
        guard let value = read(key) else { return nil }
        let fix = "write an array of strings, e.g. \(key) = \(example)"
        guard let array = value.array else { throw typeError(key, value, expected: "an array of strings", fix: fix) }
        var strings: [String] = []
        for (index, element) in array.enumerated() {
            guard let string = element.string else {
                let shown = Self.render(element).map { " (\($0))" } ?? ""
                throw error(
                    key,
                    "element \(index + 1) of \(key)\(shown) is \(Self.typeName(element.type)), "
                        + "but every element must be a string", fix: fix)
            }
            strings.append(string)
        }
        return strings
    }

    /// An array of numbers (integers or floating-point), `count` of them when given.
    mutating func numbers(_ key: String, count: Int? = nil, example: String) throws(ConfigurationError) -> [Double]? {
        guard let value = read(key) else { return nil }
        let fix = "write e.g. \(key) = \(example)"
        guard let array = value.array else { throw typeError(key, value, expected: "an array of numbers", fix: fix) }
        let numbers = try Self.numbers(array, count: count) { (message) throws(ConfigurationError) in throw error(key, "\(key): \(message)", fix: fix)
        }
        return numbers
    }

    /// An array of arrays of `width` numbers (points: `[[0, 0], [4, 0], [4, 3]]`).
    mutating func points(_ key: String, width: Int, example: String) throws(ConfigurationError) -> [[Double]]? {
        guard let value = read(key) else { return nil }
        let fix = "write e.g. \(key) = \(example)"
        guard let array = value.array else { throw typeError(key, value, expected: "an array of points", fix: fix) }
        var points: [[Double]] = []
        for (index, element) in array.enumerated() {
            guard let inner = element.array else {
                throw error(key, "point \(index + 1) of \(key) is \(Self.typeName(element.type)), but must be [x, y]", fix: fix)
            }
            points.append(
                try Self.numbers(inner, count: width) { (message) throws(ConfigurationError) in
                    throw error(key, "point \(index + 1) of \(key): \(message)", fix: fix)
                })
        }
        return points
    }

    private static func numbers(
        _ array: TOMLArray, count: Int?, fail: (String) throws(ConfigurationError) -> Never
    ) throws(ConfigurationError) -> [Double] {
        var numbers: [Double] = []
        for (index, element) in array.enumerated() {
            if let integer = element.int {
                numbers.append(Double(integer))
            } else if let double = element.double, double.isFinite {
                numbers.append(double)
            } else {
                let shown = Self.render(element).map { " (\($0))" } ?? ""
                try fail("element \(index + 1)\(shown) is \(Self.typeName(element.type)), but must be a number")
            }
        }
        if let count, numbers.count != count { try fail("\(numbers.count) numbers, but it takes \(count)") }
        return numbers
    }

    /// The sub-table `key`, or nil when it is absent.
    mutating func table(_ key: String) throws(ConfigurationError) -> TOMLTableReader? {
        guard let value = read(key) else { return nil }
        guard let table = value.table else {
            throw typeError(
                key, value, expected: "a table",
                fix: "write it as a section: [\(key)] on a line of its own, "
                    + "then its keys")
        }
        return TOMLTableReader(document: document, table: table, path: path + [key])
    }

    /// The sub-table `key`, or an empty one when it is absent (every key then reads as absent), so a section's
    /// known keys are learnt whether or not the file has the section.
    mutating func tableOrEmpty(_ key: String) throws(ConfigurationError) -> TOMLTableReader {
        try table(key) ?? TOMLTableReader(document: document, table: TOMLTable(), path: path + [key])
    }

    /// One warning per key of this table that was never read, at its line, naming the keys that are known
    /// (`knownName` says what they are: "known keys", or "known sections" at the top of `beacond.toml`).
    /// `hints` adds advice for particular keys, such as the section a misplaced key belongs in.
    func unknownKeyWarnings(knownName: String = "known keys", hints: [String: String] = [:])
        -> [ConfigurationDiagnostic]
    {
        table.keys.filter { !knownKeys.contains($0) }.map { key in
            let isSection = table[key]?.type == .table
            let what = isSection && path.isEmpty ? "unknown section [\(key)]" : "unknown key \"\(key)\""
            let place = path.isEmpty ? "" : " in [\(path.joined(separator: "."))]"
            var message = "\(what)\(place) is ignored"
            if let hint = hints[key] {
                message += "; \(hint)"
            } else if let guess = Self.closest(to: key, among: knownKeys) {
                message += "; did you mean \"\(guess)\"?"
            }
            message += " (\(knownName): \(knownKeys.joined(separator: ", ")))"
            return ConfigurationDiagnostic(file: document.file, line: line(of: key), message: message)
        }
    }

    private mutating func read(_ key: String) -> (any TOMLValueConvertible)? {
        if !knownKeys.contains(key) { knownKeys.append(key) }
        return table[key]
    }

    private func typeError(
        _ key: String, _ value: any TOMLValueConvertible, expected: String,
        fix: String
    ) -> ConfigurationError {
        let subject = Self.render(value).map { "\(key) = \($0)" } ?? key
        return error(key, "\(subject) is \(Self.typeName(value.type)), but must be \(expected)", fix: fix)
    }

    /// A scalar as it would be written in the file (long strings shortened); nil for tables and arrays.
    static func render(_ value: any TOMLValueConvertible) -> String? {
        switch value.type {
        case .string:
            let string = value.string ?? ""
            let shown = string.count > 60 ? string.prefix(57) + "..." : string[...]
            return "\"" + shown.unicodeScalars.map { $0.escaped(asASCII: false) }.joined() + "\""
        case .int: return value.int.map(String.init)
        case .double: return value.double.map { "\($0)" }
        case .bool: return value.bool.map { "\($0)" }
        case .table, .array, .date, .time, .dateTime: return nil
        }
    }

    static func typeName(_ type: TOMLType) -> String {
        switch type {
        case .table: "a table"
        case .array: "an array"
        case .string: "a string"
        case .int: "an integer"
        case .double: "a floating-point number"
        case .bool: "a boolean"
        case .date: "a date"
        case .time: "a time"
        case .dateTime: "a date-time"
        }
    }

    /// A known key at most two edits away, for the likely typo.
    private static func closest(to key: String, among candidates: [String]) -> String? {
        candidates.map { ($0, editDistance(key, $0)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }
}
