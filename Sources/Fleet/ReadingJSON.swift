/// Reads the keys beacond uses from one JSON object, straight from the message's bytes.
///
/// Why by hand: a node consuming 100 rooms × 1,000 beacons at 1 Hz parses 100,000 readings a second, and
/// Foundation's JSONDecoder (a generic tree of boxed values per message) used 0.82 of a core for that alone
/// (`beacond-bench fleet`, docs/performance.md). This reads the object once, validates it as JSON (RFC 8259:
/// strings with escapes, numbers, literals, nested values skipped with a depth limit) and keeps only the values of
/// the wanted keys. Safe Swift: every index is checked.
struct ReadingJSON {
    enum Value: Equatable {
        case string(String)
        case number(Double)
        case null
        case other
    }

    enum Failure: Error, Equatable {
        case notJSON
        case notAnObject
    }

    /// The wanted keys' values, in the order of `keys` (the last one when a key repeats, as JSONDecoder and most
    /// parsers do); nil for a key the object lacks.
    private(set) var values: [Value?]

    static let maximumDepth = 64

    /// `keys` as UTF-8, compared with each key's bytes without making a String of it.
    init(_ bytes: [UInt8], keys: [[UInt8]]) throws(Failure) {
        values = Array(repeating: nil, count: keys.count)
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{") else {
            // Valid JSON of another kind is "not an object"; anything else is not JSON.
            guard (try? reader.skipValue(depth: 0)) != nil, !reader.sawOutOfRange, reader.atEndAfterWhitespace() else {
                throw .notJSON
            }
            throw .notAnObject
        }
        reader.index += 1
        reader.skipWhitespace()
        if reader.peek() == UInt8(ascii: "}") {
            reader.index += 1
        } else {
            // A number beyond Double's range is refused as Foundation refuses it, but only in the value a key ends
            // with: like Foundation, a repeated key's earlier value is never converted. Keys whose last value had one,
            // by their raw bytes (a dictionary only once such a number is seen).
            var outOfRange: [ArraySlice<UInt8>: Bool] = [:]
            while true {
                reader.skipWhitespace()
                guard reader.peek() == UInt8(ascii: "\"") else { throw .notJSON }
                let keyStart = reader.index
                let wanted = try reader.key(among: keys)
                let key = bytes[keyStart..<reader.index]
                reader.skipWhitespace()
                guard reader.next() == UInt8(ascii: ":") else { throw .notJSON }
                reader.skipWhitespace()
                reader.sawOutOfRange = false
                if let wanted {
                    values[wanted] = try reader.value()
                } else {
                    try reader.skipValue(depth: 1)
                }
                if reader.sawOutOfRange {
                    outOfRange[key] = true
                } else if !outOfRange.isEmpty, outOfRange[key] != nil {
                    outOfRange[key] = false
                }
                reader.skipWhitespace()
                switch reader.next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "}"): break
                default: throw .notJSON
                }
                break
            }
            if outOfRange.values.contains(true) { throw .notJSON }
        }
        guard reader.atEndAfterWhitespace() else { throw .notJSON }
    }

    /// The message's bytes (the array MQTT handed over, not copied) and a position in them.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        /// A number beyond Double's range was read since this was last cleared.
        var sawOutOfRange = false

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func next() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func atEndAfterWhitespace() -> Bool {
            skipWhitespace()
            return index == bytes.count
        }

        /// A value of a wanted key: a string or a number kept, anything else valid marked `other`.
        mutating func value() throws(Failure) -> Value {
            switch peek() ?? 0 {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default:
                try skipValue(depth: 1)
                return .other
            }
        }

        mutating func skipValue(depth: Int) throws(Failure) {
            guard depth < ReadingJSON.maximumDepth else { throw .notJSON }
            switch peek() ?? 0 {
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "["): try container(close: UInt8(ascii: "]"), keyed: false, depth: depth)
            case UInt8(ascii: "{"): try container(close: UInt8(ascii: "}"), keyed: true, depth: depth)
            default: throw .notJSON
            }
        }

        private mutating func container(close: UInt8, keyed: Bool, depth: Int) throws(Failure) {
            index += 1
            skipWhitespace()
            if peek() == close {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                if keyed {
                    guard peek() == UInt8(ascii: "\"") else { throw .notJSON }
                    _ = try string()
                    skipWhitespace()
                    guard next() == UInt8(ascii: ":") else { throw .notJSON }
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                let separator = next()
                if separator == close { return }
                guard separator == UInt8(ascii: ",") else { throw .notJSON }
            }
        }

        private mutating func literal(_ word: StaticString) throws(Failure) {
            let expected = word.withUTF8Buffer { Array($0) }
            for byte in expected {
                guard next() == byte else { throw .notJSON }
            }
        }

        /// A key (at its opening quote): the index of the wanted key it is, or nil. Without escapes (every key
        /// ESPresense writes) its bytes are compared where they lie.
        mutating func key(among keys: [[UInt8]]) throws(Failure) -> Int? {
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
                end += 1
            }
            guard end < bytes.count, bytes[end] == UInt8(ascii: "\""),
                bytes[start..<end].allSatisfy({ $0 < 0x80 })
            else {
                let text = Array(try string().utf8)
                return keys.firstIndex(of: text)
            }
            index = end + 1
            let length = end - start
            return keys.firstIndex { key in
                key.count == length && key.indices.allSatisfy { key[$0] == bytes[start + $0] }
            }
        }

        /// A string (at its opening quote), unescaped. JSON is UTF-8 (RFC 8259): invalid UTF-8 and lone
        /// surrogates are not JSON, as Foundation also says.
        mutating func string() throws(Failure) -> String {
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
                end += 1
            }
            if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
                // No escape: one String from the bytes where they lie.
                index = end + 1
                // Validated and copied from a span: `String(validating:)` of a slice takes a generic path that costs
                // more than the rest of the key's parse.
                guard let text = try? String(copying: UTF8Span(validating: bytes.span.extracting(start..<end))) else {
                    throw .notJSON
                }
                return text
            }
            index += 1
            var scalars: [UInt8] = []
            while true {
                guard let byte = next() else { throw .notJSON }
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: scalars, as: UTF8.self) else { throw .notJSON }
                    return text
                case UInt8(ascii: "\\"):
                    guard let escaped = next() else { throw .notJSON }
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escaped)
                    case UInt8(ascii: "b"): scalars.append(0x08)
                    case UInt8(ascii: "f"): scalars.append(0x0C)
                    case UInt8(ascii: "n"): scalars.append(0x0A)
                    case UInt8(ascii: "r"): scalars.append(0x0D)
                    case UInt8(ascii: "t"): scalars.append(0x09)
                    case UInt8(ascii: "u"):
                        var unit = try hex4()
                        if (0xD800..<0xDC00).contains(unit) {
                            // A surrogate pair: the low half must follow as another \u escape.
                            guard next() == UInt8(ascii: "\\"), next() == UInt8(ascii: "u") else { throw .notJSON }
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw .notJSON }
                            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(unit) else { throw .notJSON }
                        scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default:
                        throw .notJSON
                    }
                case 0x00..<0x20:
                    throw .notJSON
                default:
                    scalars.append(byte)
                }
            }
        }

        private mutating func hex4() throws(Failure) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = next() else { throw .notJSON }
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw .notJSON
                }
                value = value << 4 | digit
            }
            return value
        }

        /// A number in JSON's grammar. Short decimals (ESPresense's "-65.50") are exact integer arithmetic, as
        /// correctly rounded as `Double(String)`; anything longer, or with an exponent, goes through it.
        mutating func number() throws(Failure) -> Double {
            let start = index
            var negative = false
            if peek() == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            var mantissa: UInt64 = 0
            var digits = 0
            var fractionDigits = 0
            guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { throw .notJSON }
            if first == UInt8(ascii: "0") {
                index += 1
                digits = 1
            } else {
                while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    if digits < 19 { mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0")) }
                    digits += 1
                    index += 1
                }
            }
            if peek() == UInt8(ascii: ".") {
                index += 1
                guard let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw .notJSON }
                while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    if digits < 19 { mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0")) }
                    digits += 1
                    fractionDigits += 1
                    index += 1
                }
            }
            var exponent = false
            if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                exponent = true
                index += 1
                if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
                guard let digit = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { throw .notJSON }
                while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            }
            // 2^53 holds every 15-digit mantissa exactly, and powers of ten up to 10^22 are exact doubles, so one
            // division is correctly rounded.
            if !exponent && digits <= 15 && fractionDigits <= 22 {
                var power = 1.0
                for _ in 0..<fractionDigits { power *= 10 }
                let magnitude = Double(mantissa) / power
                return negative ? -magnitude : magnitude
            }
            var text = ""
            for position in start..<index { text.unicodeScalars.append(Unicode.Scalar(bytes[position])) }
            // Beyond Double's range: noted, and refused if it is what a key ends with (RFC 8259 lets a parser set its
            // range; Foundation refuses those too).
            guard let value = Double(text) else { throw .notJSON }
            if !value.isFinite { sawOutOfRange = true }
            return value
        }
    }
}
