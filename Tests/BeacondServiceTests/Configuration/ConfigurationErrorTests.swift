import BeacondService
import BeacondCore
import Foundation
import Testing

/// Each kind of mistake is an error that names the file, the line and the problem.
@Suite("configuration errors")
struct ConfigurationErrorTests {
    /// The error for `beacond.toml` holding `text`.
    private func settingsError(_ text: String) throws -> (error: ConfigurationError?, file: String) {
        let directory = try ConfigurationDirectory()
        try directory.write(text, to: "beacond.toml")
        return (directory.loadError(), directory.settingsFile)
    }

    @Test("a TOML syntax error gives the parser's line and column")
    func syntaxError() throws {
        let (error, file) = try settingsError("[authorization]\nprompt = \"admin\"\nlocation_services = tru\n")
        let description = try #require(error).description
        #expect(error?.line == 3)
        #expect(description.hasPrefix("\(file):3: TOML syntax error at column"))
        #expect(description.contains("https://toml.io"))
    }

    @Test("every broken file is reported, not only the first: settings, calibration, two devices.d files and two apps")
    func everyBrokenFileIsReported() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[authorization]\nprompt = \"ask\"\n", to: "beacond.toml")
        try directory.write("[beacons]\n\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2\" = \"loud\"\n", to: "calibration.toml")
        try directory.write("app_id = \"org.example.A\"\nusers = [\"root\"\n", to: "apps.d/a.toml")
        try directory.write("app_id = \"org.example.Good\"\nusers = [\"root\"]\nalways_usage = \"x\"\n", to: "apps.d/b.toml")
        try directory.write("app_id = 5\n", to: "apps.d/c.toml")
        try directory.write("[devices]\nphone = 5\n", to: "devices.d/one.toml")
        try directory.write("[devices]\ntablet = \"irk:00\"\n", to: "devices.d/two.toml")
        let error = try #require(directory.loadError())
        let said = error.description
        #expect(error.file == directory.settingsFile && error.others.count == 5, "\(said)")
        for file in ["beacond.toml:2", "calibration.toml:2", "apps.d/a.toml", "apps.d/c.toml:1", "devices.d/one.toml:2", "devices.d/two.toml:2"] {
            #expect(said.contains(file), "\(file) is not said: \(said)")
        }
        #expect(!said.contains("b.toml"), "the good file is not blamed: \(said)")
        #expect(said.components(separatedBy: "; also ").count == 6, "\(said)")
    }

    /// A broken devices.d file made calibration.toml's "device:NAME" read as an unknown name, sending the
    /// administrator to declare a phone that is declared: the calibration error names the broken file instead.
    @Test("a phone calibrated by name while its devices.d file is broken: the calibration error points at that file")
    func aBrokenDevicesFileIsNamedByTheCalibrationError() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[devices]\nphone = \"irk:00\"\n", to: "devices.d/phones.toml")
        try directory.write("[beacons]\n\"device:phone\" = -50\n", to: "calibration.toml")
        let said = try #require(directory.loadError()).description
        #expect(said.contains("devices.d/phones.toml:2"), "\(said)")
        #expect(said.contains("devices.d/phones.toml, which has an error"), "\(said)")
        #expect(!said.contains("declare the phone's key in devices.d"), "sends the administrator to declare a declared phone: \(said)")
    }

    /// A key written where a device's name goes (lowercase hex is a valid name by its letters) was repeated in the
    /// fix and, for a good value, accepted and shown wherever names are: a name with 8 hex digits in a row is refused.
    @Test("a key written as a device's name is refused and never repeated")
    func aKeyAsADeviceNameIsRefused() throws {
        let key = "5a17c3e8904b6df2e1a03c7b58d64f91"
        for value in ["1", "\"irk:0c1d2e3f405162738495a6b7c8d9eafb\""] {
            let directory = try ConfigurationDirectory()
            try directory.write("[devices]\n\(key) = \(value)\n", to: "devices.d/a.toml")
            let said = try #require(directory.loadError()).description
            #expect(said.contains("8 hex digits in a row"), "\(said)")
            for start in 0...(key.count - 8) {
                let part = key.dropFirst(start).prefix(8)
                #expect(!said.contains(part), "the key's digits \(part) in: \(said)")
            }
        }
    }

    @Test("an unterminated table header is a syntax error at its line")
    func badHeader() throws {
        let (error, file) = try settingsError("\n\n[monitoring\nexit_timeout = 3\n")
        #expect(error?.file == file)
        #expect(error?.line == 3)
    }

    @Test("a wrong type names the key, its value, its type and the expected type")
    func wrongType() throws {
        let (error, file) = try settingsError("[authorization]\n\nlocation_services = \"yes\"\n")
        #expect(
            error?.description == "\(file):3: location_services = \"yes\" is a string, but must be a boolean "
                + "(write location_services = true or location_services = false)")
    }

    @Test("a section that is not a table is an error")
    func sectionNotTable() throws {
        let (error, file) = try settingsError("monitoring = 5\n")
        #expect(error?.description.hasPrefix("\(file):1: monitoring = 5 is an integer, but must be a table") == true)
    }

    @Test("a prompt that is not one of the choices")
    func badPrompt() throws {
        let (error, file) = try settingsError(
            """
            # beacond.toml
            [authorization]
            location_services = true


            # how requests are answered
            prompt = "ask"
            """)
        let description = try #require(error).description
        #expect(
            description.hasPrefix(
                "\(file):7: prompt = \"ask\" is not one of admin, deny, when-in-use, always (write e.g. prompt = "))
    }

    @Test("a scanner source that is not one of the forms", arguments: ["bluetooth", "hci:usb0", "replay:", "fifo"])
    func badScanner(_ source: String) throws {
        let (error, file) = try settingsError("[scanner]\n# where from\nsource = \"\(source)\"\n")
        let description = try #require(error).description
        #expect(description.hasPrefix("\(file):3: "))
        #expect(description.contains("auto, hci, hci:hciN, bluez, bluez:hciN, replay:PATH or fifo:PATH"))
    }

    @Test("exit_timeout must be positive and finite", arguments: ["-5", "0", "0.0", "-0.5", "inf", "nan", "1e12"])
    func badExitTimeout(_ value: String) throws {
        let (error, file) = try settingsError("[monitoring]\nexit_timeout = \(value)\n")
        let description = try #require(error).description
        #expect(description.hasPrefix("\(file):2: exit_timeout = "))
        #expect(description.contains("e.g. exit_timeout = 30"))
    }

    @Test("a negative exit_timeout is shown as written")
    func negativeExitTimeout() throws {
        let (error, file) = try settingsError("[monitoring]\nexit_timeout = -5\n")
        #expect(
            error?.description.hasPrefix("\(file):2: exit_timeout = -5 is not a positive number of seconds")
                == true)
    }

    @Test(
        "[background] values out of range or not integers name the key, its line and the range",
        arguments: [
            ("queue_limit", "0", "from 1 to 100000"), ("queue_limit", "100001", "from 1 to 100000"),
            ("queue_ttl", "59", "from 60 to 31536000"), ("queue_ttl", "\"1d\"", "from 60 to 31536000"),
            ("activation_interval", "0", "from 1 to 86400"), ("activation_interval", "1.5", "from 1 to 86400"),
        ])
    func badBackground(_ key: String, _ value: String, _ range: String) throws {
        let (error, file) = try settingsError("[background]\n\(key) = \(value)\n")
        let description = try #require(error).description
        #expect(description.hasPrefix("\(file):2: \(key)"))
        #expect(description.contains(range))
    }

    @Test("max_regions_per_client out of range or not an integer", arguments: ["0", "10001", "-1", "2.5", "\"20\""])
    func badRegionLimit(_ value: String) throws {
        let (error, file) = try settingsError("[monitoring]\nmax_regions_per_client = \(value)\n")
        let description = try #require(error).description
        #expect(description.hasPrefix("\(file):2: max_regions_per_client"))
        #expect(description.contains("from 1 to 10000"))
    }

    @Test("an admin_group that is not a group name")
    func badAdminGroup() throws {
        let (error, file) = try settingsError("[authorization]\nadmin_group = \"beacon admins\"\n")
        #expect(
            error?.description.hasPrefix(
                "\(file):2: admin_group = \"beacon admins\" is not a valid unix group name") == true)
    }

    /// Issue 21: a FIFO or a /dev/zero link in apps.d was called a permission problem, a dangling link or a
    /// directory named *.toml was passed over, and a dangling beacond.toml link meant the defaults (admin_group
    /// reverted). Each is an error that says what the file is, and nothing is opened that could block.
    @Test(
        "a configuration file that is no regular file says what it is",
        arguments: [
            ("apps.d/door.toml", "fifo", "is a FIFO (named pipe), not a regular file"),
            ("apps.d/door.toml", "/dev/zero", "is a character device, not a regular file"),
            ("apps.d/door.toml", "dangling", "is a symbolic link to /nonexistent/door.toml, which cannot be followed"),
            ("apps.d/door.toml", "directory", "is a directory, not a regular file"),
            ("beacond.toml", "dangling", "is a symbolic link to /nonexistent/door.toml, which cannot be followed"),
            ("beacond.toml", "fifo", "is a FIFO (named pipe), not a regular file"),
            ("beacond.toml", "/dev/zero", "is a character device, not a regular file"),
        ])
    func notARegularFile(_ name: String, _ kind: String, _ message: String) throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[authorization]\nadmin_group = \"root\"\n", to: "beacond.toml")
        try FileManager.default.createDirectory(atPath: directory.path + "/apps.d", withIntermediateDirectories: true)
        let file = directory.path + "/" + name
        try? FileManager.default.removeItem(atPath: file)
        switch kind {
        case "fifo": #expect(mkfifo(file, 0o600) == 0)
        case "directory": try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: true)
        case "dangling": try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: "/nonexistent/door.toml")
        default: try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: kind)
        }
        let error = try #require(directory.loadError(), "\(name) as \(kind) loaded")
        #expect(error.file == file && error.message.hasPrefix(message), "\(error)")
    }

    /// Issue 21: `[scanner] source = "replay:PATH"` at something that cannot be played loaded, and beacond started.
    @Test("a replay: source whose capture cannot be played is an error at its line", arguments: ["directory", "/dev/zero", "empty"])
    func unplayableReplaySource(_ kind: String) throws {
        let directory = try ConfigurationDirectory()
        let capture = try ReplayScannerTests.unplayable(kind, in: directory)
        try directory.write("[scanner]\n\nsource = \"replay:\(capture)\"\n", to: "beacond.toml")
        let error = try #require(directory.loadError(), "replay:\(capture) (\(kind)) loaded")
        #expect(error.file == directory.settingsFile && error.line == 3, "\(error)")
        #expect(error.message.hasPrefix("cannot replay \(capture): "), "\(error)")
    }

    @Test("a replay: source with a capture to play loads")
    func playableReplaySource() throws {
        let directory = try ConfigurationDirectory()
        let capture = try ReplayScannerTests.playable(in: directory)
        try directory.write("[scanner]\nsource = \"replay:\(capture)\"\n", to: "beacond.toml")
        #expect(try directory.load().scanner == .replay(path: capture))
    }

    @Test("a configuration file over 1 MiB is refused, not read")
    func tooLarge() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("# " + String(repeating: "x", count: 1 << 20) + "\n", to: "beacond.toml")
        #expect(directory.loadError()?.message.contains("more than a configuration file may hold") == true)
    }

    @Test("a file that is not UTF-8 names the line")
    func notUTF8() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[scanner]\n", to: "beacond.toml")
        var data = Array("[scanner]\nsource = \"".utf8)
        data += [0xFF, 0xFE]
        data += Array("\"\n".utf8)
        try Data(data).write(to: URL(fileURLWithPath: directory.settingsFile))
        let error = directory.loadError()
        #expect(error?.line == 2)
        #expect(error?.description.contains("not UTF-8") == true)
    }
}
