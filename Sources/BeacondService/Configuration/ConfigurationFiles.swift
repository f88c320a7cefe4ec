import Foundation

/// File access for the loader: reading a file as UTF-8 text and listing `apps.d`, with failures as
/// `ConfigurationError`s that say how to fix them.
enum ConfigurationFiles {
    /// The file's text, or nil when it does not exist.
    static func readIfPresent(_ file: String) throws(ConfigurationError) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else { return nil }
        guard !isDirectory.boolValue else {
            throw ConfigurationError(file: file, line: nil, message: "is a directory, not a file",
                                     fix: "replace it with a TOML file or remove it")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ConfigurationError(file: file, line: nil, message: "cannot be read: \(error.localizedDescription)",
                                     fix: "make it readable by the daemon's user (check its owner and mode)")
        }
        return try text(of: data, file: file)
    }

    /// The `*.toml` files of `directory`, sorted by name; none when it does not exist.
    static func declarationFiles(in directory: String, warnings: inout [ConfigurationDiagnostic])
        throws(ConfigurationError) -> [String]
    {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else {
            throw ConfigurationError(file: directory, line: nil, message: "is a file, not a directory",
                                     fix: "make it a directory of app declarations (*.toml) or remove it")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw ConfigurationError(file: directory, line: nil,
                                     message: "cannot be listed: \(error.localizedDescription)",
                                     fix: "make it readable by the daemon's user (check its owner and mode)")
        }
        var files: [String] = []
        for name in names.sorted() where name.hasSuffix(".toml") && !name.hasPrefix(".") {
            let file = directory + "/" + name
            var entryIsDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: file, isDirectory: &entryIsDirectory),
               entryIsDirectory.boolValue {
                warnings.append(ConfigurationDiagnostic(file: file, line: nil,
                                                        message: "is a directory, not an app declaration; ignored"))
                continue
            }
            files.append(file)
        }
        return files
    }

    /// The data as UTF-8 text; the error names the first line that is not UTF-8.
    private static func text(of data: Data, file: String) throws(ConfigurationError) -> String {
        if let text = String(data: data, encoding: .utf8) { return text }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let bad = lines.firstIndex { String(data: Data($0), encoding: .utf8) == nil }
        throw ConfigurationError(file: file, line: bad.map { $0 + 1 }, message: "the file is not UTF-8 text",
                                 fix: "save it as UTF-8 (TOML requires it)")
    }
}
