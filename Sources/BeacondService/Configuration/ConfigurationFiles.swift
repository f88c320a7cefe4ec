import Foundation
import BeacondCore
#if canImport(Glibc)
    import Glibc
#endif

/// File access for the loader: reading a file as UTF-8 text and listing `apps.d`, with failures as
/// `ConfigurationError`s that say how to fix them.
enum ConfigurationFiles {
    /// The most a configuration file may hold: the shipped ones are a few KiB.
    static let largestFile = 1 << 20

    /// The file's text, or nil when nothing is at that path. Anything else that is not a readable regular file of
    /// at most `largestFile` bytes is an error that says what it is: the daemon never falls back to its defaults
    /// while a file is there, and never opens a FIFO or device (which would block it or never end).
    static func readIfPresent(_ file: String) throws(ConfigurationError) -> String? {
        var link = stat()
        guard lstat(file, &link) == 0 else {
            guard errno == ENOENT else { throw unusable(file, "cannot be examined: \(String(cString: strerror(errno)))") }
            return nil
        }
        var status = stat()
        guard stat(file, &status) == 0 else {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: file)) ?? "?"
            throw ConfigurationError(
                file: file, line: nil,
                message: "is a symbolic link to \(target), which cannot be followed: \(String(cString: strerror(errno)))",
                fix: "point the link at the file, or remove the link")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw unusable(file, "is \(kind(status.st_mode)), not a regular file") }
        guard status.st_size <= Int64(largestFile) else {
            throw ConfigurationError(
                file: file, line: nil,
                message: "is \(status.st_size) bytes, more than a configuration file "
                    + "may hold (\(largestFile))", fix: "replace it with the TOML file it should be")
        }
        // Opened without blocking, and checked again: the path may have been replaced since `stat`.
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ConfigurationError(
                file: file, line: nil, message: "cannot be read: \(String(cString: strerror(errno)))",
                fix: "make it readable by the daemon's user (check its owner and mode)")
        }
        defer { close(descriptor) }
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw unusable(file, "changed while it was read")
        }
        var bytes = [UInt8](repeating: 0, count: largestFile + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if read == 0 { break }
            if read < 0 {
                if errno == EINTR { continue }
                throw unusable(file, "cannot be read: \(String(cString: strerror(errno)))")
            }
            count += read
        }
        guard count <= largestFile else {
            throw ConfigurationError(
                file: file, line: nil, message: "grew to more than a configuration file may hold (\(largestFile) bytes)",
                fix: "replace it with the TOML file it should be")
        }
        return try text(of: Data(bytes[..<count]), file: file)
    }

    private static func unusable(_ file: String, _ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: nil, message: message, fix: "replace it with a TOML file, or remove it")
    }

    /// What kind of file `mode` (from `stat`) says, in words.
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "an unknown kind of file"
        }
    }

    /// The `*.toml` files of `directory`, sorted by name; none when it does not exist.
    /// `holding`: what the directory is for, as its fix names it.
    static func declarationFiles(in directory: String, holding: String = "app declarations") throws(ConfigurationError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            // Absent is no directory; a link to nothing is a mistake (a dangling file link is one too), not silence.
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: directory) {
                throw ConfigurationError(
                    file: directory, line: nil, message: "is a symbolic link to \(target), which does not exist",
                    fix: "point it at the directory of \(holding), or remove it")
            }
            return []
        }
        guard isDirectory.boolValue else {
            throw ConfigurationError(
                file: directory, line: nil, message: "is a file, not a directory",
                fix: "make it a directory of \(holding) (*.toml) or remove it")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw ConfigurationError(
                file: directory, line: nil,
                message: "cannot be listed: \(error.localizedDescription)",
                fix: "make it readable by the daemon's user (check its owner and mode)")
        }
        var files: [String] = []
        // Every entry named *.toml is read: one that is no readable file (a directory, a dangling link) is an error
        // from `readIfPresent`, not an app silently missing.
        for name in names.sorted() where name.hasSuffix(".toml") && !name.hasPrefix(".") {
            files.append(directory + "/" + name)
        }
        return files
    }

    /// The data as UTF-8 text; the error names the first line that is not UTF-8.
    private static func text(of data: Data, file: String) throws(ConfigurationError) -> String {
        if let text = String(data: data, encoding: .utf8) { return text }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let bad = lines.firstIndex { String(data: Data($0), encoding: .utf8) == nil }
        throw ConfigurationError(
            file: file, line: bad.map { $0 + 1 }, message: "the file is not UTF-8 text",
            fix: "save it as UTF-8 (TOML requires it)")
    }
}
