/// Whether a message repeats key material (issue 38): a key quoted back one digit short falls to 16 guesses, so
/// no 8 characters in a row of a key may appear in what the daemon and its tools say.
public enum KeyLeaks {
    /// The first 8 characters in a row of one of `secrets` that `message` repeats, or nil. Case, `:`, `-`, `_` and
    /// white space are ignored on both sides (hex comes with separators and in either case).
    public static func repeated(in message: String, of secrets: [String]) -> String? {
        let said = squeezed(message)
        for secret in secrets {
            let digits = Array(squeezed(secret))
            guard digits.count >= 8 else { continue }
            for start in 0...(digits.count - 8) {
                let window = String(digits[start..<(start + 8)])
                if said.contains(window) { return window }
            }
        }
        return nil
    }

    /// The forms of a 16-byte key, most significant byte first, whose pieces a message must not hold: its hex in
    /// both byte orders and its base64 in both orders (base64 as a keychain exports it).
    public static func forms(ofHex hex: String, base64: [String]) -> [String] {
        let bytes = stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return String(hex[start..<hex.index(start, offsetBy: 2)])
        }
        return [hex, bytes.reversed().joined()] + base64
    }

    private static func squeezed(_ text: String) -> String {
        String(text.lowercased().filter { !($0 == ":" || $0 == "-" || $0 == "_" || $0.isWhitespace) })
    }
}
