import BeacondService
import BeacondCore
import Foundation

/// A configuration (or state) directory under the system's temporary directory, removed when the test ends.
final class ConfigurationDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var settingsFile: String { path + "/beacond.toml" }

    /// Writes `text` to `relativePath` (e.g. `beacond.toml`, `apps.d/demo.toml`), creating folders.
    func write(_ text: String, to relativePath: String) throws {
        let file = path + "/" + relativePath
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    }

    /// Loads as if every user and group named existed: these tests are about the files, not this machine's
    /// accounts (ConfigurationWarningsTests are).
    func load() throws(ConfigurationError) -> DaemonConfiguration {
        try ConfigurationLoader.load(directory: path, accounts: .everything)
    }

    /// The error loading this directory throws, or nil when it loads.
    func loadError() -> ConfigurationError? {
        do {
            _ = try load()
            return nil
        } catch {
            return error
        }
    }
}
