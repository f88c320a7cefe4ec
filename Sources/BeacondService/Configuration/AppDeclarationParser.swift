import BeaconKit
import BeacondCore

/// Reads one `apps.d/*.toml` file: one app, keys at the top level.
enum AppDeclarationParser {
    /// The app, the line of its `app_id` (for the duplicate-declaration message) and warnings.
    struct Parsed {
        var app: AppConfiguration
        var appIDLine: Int?
        var warnings: [ConfigurationDiagnostic]
    }

    static func parse(_ document: TOMLDocument) throws(ConfigurationError) -> Parsed {
        var root = document.rootReader
        let appID = try readAppID(&root, file: document.file)
        guard let users = try root.stringArray("users", example: "[\"alice\", \"bob\"]") else {
            throw ConfigurationError(
                file: document.file, line: nil, message: "app \(appID) has no users key",
                fix: "add users = [\"USER\", ...] naming the unix users allowed to register "
                    + "as the app (users = [] allows nobody)")
        }
        for user in users where !ConfigurationNames.isUnixName(user) {
            throw root.error(
                "users", "users contains \"\(user)\", which is not a valid unix user name",
                fix: "list unix user names, e.g. users = [\"alice\"]")
        }
        let executable = try root.string("executable", example: "/usr/bin/beacon-demo")
        if let executable, !executable.hasPrefix("/") {
            throw root.error(
                "executable", "executable = \"\(executable)\" is not an absolute path",
                fix: "write the full path of the program, e.g. executable = \"/usr/bin/beacon-demo\", "
                    + "or remove the key to allow any program of the listed users")
        }
        let whenInUse = try usageDescription(&root, request: .whenInUse)
        let always = try usageDescription(&root, request: .always)
        let dbusName = try root.string("dbus_name", example: "org.example.BeaconDemo")
        if let dbusName, !ConfigurationNames.isWellKnownBusName(dbusName) {
            throw root.error(
                "dbus_name", "dbus_name = \"\(dbusName)\" is not a valid D-Bus well-known name",
                fix: "write two or more dot-separated elements of letters, digits, _ and -, none "
                    + "starting with a digit, e.g. dbus_name = \"org.example.BeaconDemo\"")
        }
        let devices = try DeviceKeysParser.parse(&root)
        var warnings = root.unknownKeyWarnings()
        if !devices.isEmpty, let warning = DeviceKeysParser.exposureWarning(document.file) { warnings.append(warning) }
        let declaration = AppDeclaration(
            appID: appID, whenInUseUsageDescription: whenInUse,
            alwaysUsageDescription: always, users: Set(users),
            executable: executable, declarationFile: document.file)
        return Parsed(
            app: AppConfiguration(declaration: declaration, dbusName: dbusName, devices: devices),
            appIDLine: root.line(of: "app_id"), warnings: warnings)
    }

    private static func readAppID(_ root: inout TOMLTableReader, file: String) throws(ConfigurationError) -> String {
        guard let appID = try root.string("app_id", example: "org.example.BeaconDemo") else {
            throw ConfigurationError(
                file: file, line: nil, message: "the file declares no app_id",
                fix: "add app_id = \"org.example.App\" (the id clients pass to RegisterClient)")
        }
        guard ConfigurationNames.isAppID(appID) else {
            throw root.error(
                "app_id", "app_id = \"\(appID)\" is not a valid app id",
                fix: "use letters, digits, '.', '-' and '_' in reverse-DNS style, "
                    + "e.g. app_id = \"org.example.BeaconDemo\"")
        }
        return appID
    }

    /// Absent is fine (requests of that kind then fail with MissingUsageDescription); present but blank is a
    /// mistake worth stopping for, because it looks declared and is not.
    private static func usageDescription(_ root: inout TOMLTableReader, request: AuthorizationRequest)
        throws(ConfigurationError) -> String?
    {
        let key = request.usageDescriptionKey
        guard let text = try root.string(key, example: "Shows the beacons near you") else { return nil }
        guard !text.allSatisfy(\.isWhitespace) else {
            throw root.error(
                key, "\(key) is empty",
                fix: "write why the app needs location (\(request.methodName) shows it to the "
                    + "administrator), or remove the key if the app never calls \(request.methodName)")
        }
        return text
    }
}
