/// Text that came from somewhere beacond and beaconctl do not control (a client's region identifier or app id,
/// an old database, a daemon's reply), made safe to show on a terminal or in the journal: every control
/// character (C0, DEL and C1, so ESC and the 8-bit CSI too) is written out as an escape, so such text cannot move
/// a cursor, recolour a line, retitle a window or fake a second line; so is every bidirectional control, so it
/// cannot reorder what follows it on the line (`lobby\u{202E}txt.exe` shown as `lobbyexe.txt`); and so is every
/// character that shows as nothing or breaks a line (format characters, line and paragraph separators, private use,
/// Hangul fillers), so no identifier can look like another or fake a line. One escape style everywhere: `\n`,
/// `\t`, `\r`, and `\u{1B}` for the rest.
public enum UntrustedText {
    /// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The invisible characters that change the direction of the text after them: the embeddings and overrides
    /// (U+202A–U+202E), the isolates (U+2066–U+2069) and the marks (U+200E, U+200F, U+061C). Letters of
    /// right-to-left scripts are not among them.
    public static func isBidirectionalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }

    /// Characters that show as nothing, or as something they are not: Unicode's format characters (Cf: soft hyphen,
    /// zero-width space and joiners, the byte-order mark, tag characters, interlinear annotations), line and
    /// paragraph separators (Zl, Zp), private use (Co: a font's own glyphs), and the Hangul fillers, letters that
    /// draw as blank space.
    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse: return true
        default: break
        }
        switch scalar.value {
        case 0x115F, 0x1160, 0x3164, 0xFFA0: return true
        default: return false
        }
    }

    /// What `escaped` and `JSONString` write out as an escape.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        // Printable ASCII, most of what the journal and tables get, without a look-up of Unicode's properties.
        if scalar.value >= 0x20 && scalar.value < 0x7F { return false }
        return isControl(scalar) || isBidirectionalControl(scalar) || isInvisible(scalar)
    }

    /// `text` with control and bidirectional characters escaped. `quote`: a character also escaped with a backslash, and so is the
    /// backslash itself (for text shown between quotes). `limit`: at most this many characters, then `…`.
    public static func escaped(_ text: String, quote: Unicode.Scalar? = nil, limit: Int? = nil) -> String {
        guard quote != nil || limit != nil || text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if let limit, count == limit {
                escaped += "…"
                break
            }
            count += 1
            switch scalar {
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            case "\\" where quote != nil: escaped += "\\\\"
            case _ where scalar == quote: escaped += "\\" + String(scalar)
            case _ where needsEscape(scalar):
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// JSON string literals, written one way for every JSON beacond and beaconctl print.
public enum JSONString {
    /// Appends `value` as a JSON string literal. C0 must be escaped in JSON; DEL, C1 and the bidirectional controls
    /// may stay raw, but a terminal acts on them (an 8-bit CSI, text reordered), so they are escaped too.
    public static func append(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where UntrustedText.needsEscape(scalar):
                // JSON's escapes are UTF-16 code units: past U+FFFF, a surrogate pair.
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    /// `value` as a JSON string literal.
    public static func quoted(_ value: String) -> String {
        var output = ""
        append(value, to: &output)
        return output
    }
}
