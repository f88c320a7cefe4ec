/// Something odd but harmless in a configuration file (an unknown section or key, as BlueZ's `main.conf` warns
/// about): the daemon logs it and carries on.
public struct ConfigurationDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// The file the diagnostic is about.
    public var file: String
    /// The 1-based line in `file`, when it is known.
    public var line: Int?
    /// What is odd, and what the daemon does about it.
    public var message: String

    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`, the form editors and compilers use, so the location is clickable.
    public var description: String { "\(ConfigurationLocation.text(file: file, line: line)): \(message)" }
}

/// A configuration the daemon cannot run with: the file, the line, what is wrong and how to fix it.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file that is wrong (or, for a command-line value, the option's name, e.g. `--scanner`).
    public var file: String
    /// The 1-based line in `file`, when it is known.
    public var line: Int?
    /// What is wrong.
    public var message: String
    /// How to fix it, when there is something more useful to say than the message itself.
    public var fix: String?
    /// The other files' problems found in the same reading, in order (said after this one).
    public var others: [ConfigurationError] = []

    public init(file: String, line: Int?, message: String, fix: String? = nil) {
        self.file = file
        self.line = line
        self.message = message
        self.fix = fix
    }

    /// `file:line: message (fix)`, then `; also file:line: …` for each other problem.
    public var description: String {
        ([self] + others).map(\.single).joined(separator: "; also ")
    }

    private var single: String {
        let location = ConfigurationLocation.text(file: file, line: line)
        guard let fix else { return "\(location): \(message)" }
        return "\(location): \(message) (\(fix))"
    }
}

/// The `file:line` prefix shared by diagnostics and errors.
package enum ConfigurationLocation {
    package static func text(file: String, line: Int?) -> String {
        guard let line else { return file }
        return "\(file):\(line)"
    }
}
