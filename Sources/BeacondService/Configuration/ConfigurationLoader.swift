import BeaconKit
import BeacondAPI
import Foundation
public import BeacondCore

/// Reads the daemon's configuration directory (`/etc/beacond` unless `--config-dir` says otherwise).
public enum ConfigurationLoader {
    /// The daemon settings file in the configuration directory.
    public static let settingsFileName = "beacond.toml"
    /// The folder of app declarations in the configuration directory.
    public static let appsDirectoryName = "apps.d"

    /// Reads `<dir>/beacond.toml` (absent → defaults, with no error) and `<dir>/apps.d/*.toml` (absent dir → no
    /// apps), sorted by file name. Files starting with `.` are skipped (editor and package-manager leftovers).
    ///
    /// The scanner source is `scanner` (`beacond --scanner`) when given, else `[scanner] source`; a `replay:` capture
    /// that cannot be played (`ReplayScanner.check`) is an error naming where the source was set. With `makeFIFO`
    /// (the daemon's start and reloads) a `fifo:` source's FIFO is made now, so writers find it before anyone scans
    /// (`FIFOScanner.prepare`): something else at its path is an error naming where the source was set, a FIFO that
    /// cannot be made a warning (scanning says why, and retries).
    ///
    /// Throws the problems that stop the daemon, every broken file's (the first, with the others in `others`: an
    /// administrator fixing one file learns of the next at once, not at the next reload); harmless oddities are in
    /// `warnings`, and so are names that
    /// cannot work on this system (`accounts`): a listed user or the `admin_group` that does not exist, and a
    /// configuration directory that is not there.
    public static func load(
        directory: String, scanner: ScannerSpec? = nil,
        accounts: AccountLookup = .system, makeFIFO: Bool = false
    ) throws(ConfigurationError) -> DaemonConfiguration {
        let settingsFile = path(directory, settingsFileName)
        var problems: [ConfigurationError] = []
        /// Each file's problem is kept and the next file read: all are reported together.
        func collecting(_ body: () throws(ConfigurationError) -> Void) {
            do {
                try body()
            } catch {
                // A step that reads several files (devices.d) reports them all: flattened, in order.
                var first = error
                first.others = []
                problems += [first] + error.others
            }
        }
        var configuration = DaemonConfiguration.defaults
        configuration.configFile = settingsFile
        var settingsDocument: TOMLDocument?
        collecting { () throws(ConfigurationError) in
            if let text = try ConfigurationFiles.readIfPresent(settingsFile) {
                let document = try TOMLDocument(file: settingsFile, text: text)
                configuration = try DaemonSettingsParser.parse(document)
                settingsDocument = document
            }
        }
        // Before calibration.toml, whose [beacons] may name the administrator's devices.
        // The devices.d files that could not be read: a phone calibrated by name may be declared in one of them.
        var brokenDeviceFiles: [String] = []
        collecting { () throws(ConfigurationError) in
            do throws(ConfigurationError) {
                try DeviceKeysParser.loadAdministratorDevices(
                    directory: path(directory, DeviceKeysParser.directoryName), into: &configuration)
            } catch {
                brokenDeviceFiles = [error.file] + error.others.map(\.file)
                throw error
            }
        }
        let calibrationFile = path(directory, CalibrationParser.fileName)
        collecting { () throws(ConfigurationError) in
            if let text = try ConfigurationFiles.readIfPresent(calibrationFile) {
                try CalibrationParser.parse(
                    try TOMLDocument(file: calibrationFile, text: text), into: &configuration, brokenDeviceFiles: brokenDeviceFiles)
            }
        }
        collecting { () throws(ConfigurationError) in
            // The file [rooms] floorplan names (relative to the directory), else floorplan.toml there if present.
            let named = configuration.floorPlanSetting
            let file = named.map { $0.hasPrefix("/") ? $0 : path(directory, $0) } ?? path(directory, FloorPlanParser.fileName)
            guard let text = try ConfigurationFiles.readIfPresent(file) else {
                guard named != nil else { return }
                throw ConfigurationError(
                    file: settingsFile, line: settingsDocument?.keyLines.line(of: ["rooms", "floorplan"]),
                    message: "floorplan = \"\(named!)\": \(file) does not exist",
                    fix: "correct the path, write the plan there (floorplan.toml(5)), or import one with beaconctl floorplan import")
            }
            let parsed = try FloorPlanParser.parse(try TOMLDocument(file: file, text: text))
            configuration.floorPlan = parsed.plan
            configuration.warnings += parsed.warnings
            if configuration.mqtt.broker == nil {
                configuration.warnings.append(
                    ConfigurationDiagnostic(
                        file: file, line: nil,
                        message: "the floor plan places beacons from receivers on an MQTT broker, and [mqtt] broker is not set "
                            + "in \(settingsFile): no beacon is placed until it is. Fix: set [mqtt] broker and room (docs/fleet.md)"))
            }
        }
        if let scanner { configuration.scanner = scanner }
        let sourceFile = scanner == nil ? settingsFile : "--scanner"
        let sourceLine = scanner == nil ? settingsDocument?.keyLines.line(of: ["scanner", "source"]) : nil
        if case .replay(let capture) = configuration.scanner {
            // Checked here, not only when scanning starts: a capture that cannot play is refused at start and
            // on reload rather than leaving the daemon idle with nothing wrong to see.
            do {
                try ReplayScanner.check(path: capture)
            } catch {
                problems.append(ConfigurationError(file: sourceFile, line: sourceLine, message: error.message))
            }
        }
        if !accounts.directoryExists(directory) {
            configuration.warnings.append(
                ConfigurationDiagnostic(
                    file: directory, line: nil,
                    message:
                        "the configuration directory does not exist: beacond runs with the built-in defaults and no declared "
                        + "apps, so no client can register. Fix: pass the right --config-dir, or create the directory with "
                        + "\(settingsFileName) and \(appsDirectoryName)/ (make install puts them in /etc/beacond)"))
        }
        if !accounts.groupExists(configuration.adminGroup) {
            configuration.warnings.append(
                ConfigurationDiagnostic(
                    file: settingsFile, line: settingsDocument?.keyLines.line(of: ["authorization", "admin_group"]),
                    message: "admin_group \"\(configuration.adminGroup)\" is not a group on this system, so only root may "
                        + "call \(BeacondInterface.admin) (beaconctl auth, services, status). Fix: groupadd --system "
                        + "\(configuration.adminGroup), or set admin_group in [authorization] to an existing group"))
        }
        let appsDirectory = path(directory, appsDirectoryName)
        var declaredAt: [String: (file: String, line: Int?)] = [:]
        var files: [String] = []
        collecting { () throws(ConfigurationError) in files = try ConfigurationFiles.declarationFiles(in: appsDirectory) }
        for file in files {
            var read: (document: TOMLDocument, parsed: AppDeclarationParser.Parsed)?
            collecting { () throws(ConfigurationError) in
                guard let text = try ConfigurationFiles.readIfPresent(file) else { return }
                let document = try TOMLDocument(file: file, text: text)
                read = (document, try AppDeclarationParser.parse(document))
            }
            guard let (document, parsed) = read else { continue }
            let appID = parsed.app.declaration.appID
            if let first = declaredAt[appID] {
                let firstPlace = first.line.map { "\(first.file):\($0)" } ?? first.file
                problems.append(
                    ConfigurationError(
                        file: file, line: parsed.appIDLine,
                        message: "app_id \"\(appID)\" is already declared in \(firstPlace)",
                        fix: "declare each app in exactly one file: remove one of the two files "
                            + "or give one a different app_id"))
                continue
            }
            declaredAt[appID] = (file, parsed.appIDLine)
            configuration.apps[appID] = parsed.app
            configuration.warnings += parsed.warnings
            for user in parsed.app.declaration.users.sorted() where !accounts.userExists(user) {
                configuration.warnings.append(
                    ConfigurationDiagnostic(
                        file: file, line: document.keyLines.line(of: ["users"]),
                        message: "user \"\(user)\" in users of \(appID) does not exist on this system, so nobody can "
                            + "register as \(appID) under that name. Fix: correct the name, or create the user"))
            }
        }
        // Last, so a configuration rejected for another file's problem makes nothing; what is in the way is still said.
        if makeFIFO, case .fifo(let fifo) = configuration.scanner {
            do {
                try FIFOScanner.prepare(path: fifo, create: problems.isEmpty)
            } catch {
                switch error {
                case .inTheWay(let refusal):
                    problems.append(ConfigurationError(file: sourceFile, line: sourceLine, message: refusal.message))
                case .cannotMake(let failure):
                    configuration.warnings.append(
                        ConfigurationDiagnostic(
                            file: sourceFile, line: sourceLine,
                            message: failure.message + " (scanning fails until it can be made, and is tried again every 30 s)"))
                }
            }
        }
        if var first = problems.first {
            first.others = Array(problems.dropFirst())
            throw first
        }
        configuration.warnings += deviceWarnings(configuration, devicesDirectory: path(directory, DeviceKeysParser.directoryName))
        return configuration
    }

    /// Declarations that work but are likely mistakes: a name in both devices.d and an app's `[devices]` (which key
    /// the app's regions follow is not obvious), and one key under two names that one app sees (one phone, two names:
    /// devices.d's, or its own). Two apps that each name the same phone are not one: each sees its own names.
    static func deviceWarnings(_ configuration: DaemonConfiguration, devicesDirectory: String) -> [ConfigurationDiagnostic] {
        var warnings: Set<ConfigurationDiagnostic> = []
        let administrator = configuration.devices.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value, devicesDirectory) }
        /// Warns of a key under several names in `seen`, where one of them is declared in `file` (the administrator's
        /// own duplicates are said once, for devices.d, not again for every app).
        func sameKey(_ seen: [(String, IdentityResolvingKey, String)], file: String) {
            var names: [[UInt8]: [String]] = [:]
            var inFile: Set<[UInt8]> = []
            for (name, key, place) in seen {
                names[key.bytes, default: []].append("\(name) (\(place))")
                if place == file { inFile.insert(key.bytes) }
            }
            for (bytes, declared) in names where declared.count > 1 && inFile.contains(bytes) {
                warnings.insert(
                    ConfigurationDiagnostic(
                        file: file, line: nil,
                        message: "one key is declared under \(declared.count) names: \(declared.sorted().joined(separator: ", ")): "
                            + "they are one phone, whose regions follow either name. Fix: keep one name for it"))
            }
        }
        sameKey(administrator, file: devicesDirectory)
        for appID in configuration.apps.keys.sorted() {
            let app = configuration.apps[appID]!
            let file = app.declaration.declarationFile
            let own = app.devices.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value, file) }
            sameKey(own + administrator.filter { app.devices[$0.0] == nil }, file: file)
            for (name, _, _) in own where configuration.devices[name] != nil {
                warnings.insert(
                    ConfigurationDiagnostic(
                        file: file, line: nil,
                        message: "device \"\(name)\" is declared both here and in \(devicesDirectory): for \(appID) this "
                            + "file's key wins; every other app gets the administrator's. Fix: give one of them another name"))
            }
        }
        return warnings.sorted { $0.description < $1.description }
    }

    private static func path(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

/// Which users, groups and directories exist: the system's, or a test's.
public struct AccountLookup: Sendable {
    public var userExists: @Sendable (String) -> Bool
    public var groupExists: @Sendable (String) -> Bool
    public var directoryExists: @Sendable (String) -> Bool

    public init(
        userExists: @escaping @Sendable (String) -> Bool, groupExists: @escaping @Sendable (String) -> Bool,
        directoryExists: @escaping @Sendable (String) -> Bool
    ) {
        self.userExists = userExists
        self.groupExists = groupExists
        self.directoryExists = directoryExists
    }

    /// This machine's accounts (NSS: /etc/passwd, /etc/group, and whatever else nsswitch.conf names).
    public static let system = AccountLookup(
        userExists: { UnixAccounts.userID(named: $0) != nil },
        groupExists: { UnixAccounts.groupID(named: $0) != nil },
        directoryExists: { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        })

    /// Every name exists (tests about other things than this system's accounts).
    public static let everything = AccountLookup(
        userExists: { _ in true }, groupExists: { _ in true },
        directoryExists: { _ in true })
}
