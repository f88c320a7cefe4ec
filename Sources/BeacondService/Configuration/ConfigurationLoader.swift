import Foundation

/// Reads the daemon's configuration directory (`/etc/beacond` unless `--config-dir` says otherwise).
public enum ConfigurationLoader {
    /// The daemon settings file in the configuration directory.
    public static let settingsFileName = "beacond.toml"
    /// The folder of app declarations in the configuration directory.
    public static let appsDirectoryName = "apps.d"

    /// Reads `<dir>/beacond.toml` (absent → defaults, with no error) and `<dir>/apps.d/*.toml` (absent dir → no
    /// apps), sorted by file name. Files starting with `.` are skipped (editor and package-manager leftovers).
    ///
    /// Throws the first problem that stops the daemon; harmless oddities are in `warnings`.
    public static func load(directory: String) throws(ConfigurationError) -> DaemonConfiguration {
        let settingsFile = path(directory, settingsFileName)
        var configuration: DaemonConfiguration
        if let text = try ConfigurationFiles.readIfPresent(settingsFile) {
            configuration = try DaemonSettingsParser.parse(TOMLDocument(file: settingsFile, text: text))
        } else {
            configuration = .defaults
            configuration.configFile = settingsFile
        }
        let appsDirectory = path(directory, appsDirectoryName)
        var declaredAt: [String: (file: String, line: Int?)] = [:]
        for file in try ConfigurationFiles.declarationFiles(in: appsDirectory, warnings: &configuration.warnings) {
            guard let text = try ConfigurationFiles.readIfPresent(file) else { continue }
            let parsed = try AppDeclarationParser.parse(TOMLDocument(file: file, text: text))
            let appID = parsed.app.declaration.appID
            if let first = declaredAt[appID] {
                let firstPlace = first.line.map { "\(first.file):\($0)" } ?? first.file
                throw ConfigurationError(file: file, line: parsed.appIDLine,
                                         message: "app_id \"\(appID)\" is already declared in \(firstPlace)",
                                         fix: "declare each app in exactly one file: remove one of the two files "
                                            + "or give one a different app_id")
            }
            declaredAt[appID] = (file, parsed.appIDLine)
            configuration.apps[appID] = parsed.app
            configuration.warnings += parsed.warnings
        }
        return configuration
    }

    private static func path(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
