import BeacondAPI

/// Client-supplied text as it may appear inside an error or log message: quoted, with control characters
/// (C0, DEL, C1, so also ESC), backslashes and quotes escaped, and cut to a readable length. A client cannot
/// then move a terminal's cursor, colour a journal line or fake a second line in `beaconctl`'s output.
public enum ClientText {
    /// `'text'` with `\n`, `\t`, `\r`, `\\`, `\'` and `\u{1B}`-style escapes; longer text ends in `…` after `limit`
    /// characters.
    public static func quoted(_ text: String, limit: Int = 80) -> String {
        "'" + UntrustedText.escaped(text, quote: "'", limit: limit) + "'"
    }

    /// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        UntrustedText.isControl(scalar)
    }

    /// The first control character in `text`, if any.
    public static func firstControl(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first(where: isControl)
    }
}
