import BeaconKit
import BeacondService
import BeacondCore
import Testing

@Suite("apps.d declarations")
struct AppDeclarationTests {
    private static let demo = """
        app_id = "org.example.Demo"
        users = ["alice", "bob"]
        executable = "/usr/bin/demo"
        when_in_use_usage = "Shows nearby beacons."
        always_usage = "Tells you when you arrive."
        dbus_name = "org.example.Demo"
        """

    @Test("every key is read, and the declaration names its file")
    func everyKey() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(Self.demo, to: "apps.d/demo.toml")
        let configuration = try directory.load()
        let file = directory.path + "/apps.d/demo.toml"
        let expected = AppConfiguration(
            declaration: AppDeclaration(
                appID: "org.example.Demo", whenInUseUsageDescription: "Shows nearby beacons.",
                alwaysUsageDescription: "Tells you when you arrive.", users: ["alice", "bob"],
                executable: "/usr/bin/demo", declarationFile: file),
            dbusName: "org.example.Demo")
        #expect(configuration.apps == ["org.example.Demo": expected])
        #expect(configuration.declaration(of: "org.example.Demo") == expected.declaration)
        #expect(configuration.warnings.isEmpty)
    }

    @Test("optional keys may be absent and users may be empty")
    func minimal() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("app_id = \"tool\"\nusers = []\n", to: "apps.d/tool.toml")
        let app = try #require(try directory.load().apps["tool"])
        #expect(app.declaration.users.isEmpty)
        #expect(app.declaration.executable == nil)
        #expect(app.declaration.whenInUseUsageDescription == nil)
        #expect(app.declaration.alwaysUsageDescription == nil)
        #expect(app.dbusName == nil)
    }

    @Test("several files are all read; other files and hidden files are not")
    func severalFiles() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("app_id = \"b.app\"\nusers = [\"bob\"]\n", to: "apps.d/b.toml")
        try directory.write("app_id = \"a.app\"\nusers = [\"alice\"]\n", to: "apps.d/a.toml")
        try directory.write("not toml at all [", to: "apps.d/README")
        try directory.write("not toml at all [", to: "apps.d/.a.toml")
        try directory.write("not toml at all [", to: "apps.d/a.toml.dpkg-old")
        #expect(try directory.load().apps.keys.sorted() == ["a.app", "b.app"])
    }

    @Test("the same app_id in two files names both files")
    func duplicateAppID() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("# first\napp_id = \"org.example.Demo\"\nusers = []\n", to: "apps.d/a.toml")
        try directory.write("users = []\n\napp_id = \"org.example.Demo\"\n", to: "apps.d/b.toml")
        let error = try #require(directory.loadError())
        #expect(
            error.description.hasPrefix(
                "\(directory.path)/apps.d/b.toml:3: app_id \"org.example.Demo\" is "
                    + "already declared in \(directory.path)/apps.d/a.toml:2"))
    }

    @Test("a missing app_id is an error naming the file")
    func missingAppID() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("users = [\"alice\"]\n", to: "apps.d/nameless.toml")
        let error = try #require(directory.loadError())
        #expect(error.file == directory.path + "/apps.d/nameless.toml")
        #expect(error.description.contains("declares no app_id"))
        #expect(error.description.contains("add app_id = "))
    }

    @Test("a missing users list is an error: an app must name who may act as it")
    func missingUsers() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("app_id = \"org.example.Demo\"\n", to: "apps.d/demo.toml")
        let error = try #require(directory.loadError())
        #expect(error.description.contains("has no users key"))
    }

    @Test(
        "invalid values name the file, the line and the key",
        arguments: [
            ("app_id = \"\"", "app_id = \"\" is not a valid app id"),
            ("app_id = \"org..example\"", "is not a valid app id"),
            ("app_id = \"org example\"", "is not a valid app id"),
            ("app_id = 7", "app_id = 7 is an integer, but must be a string"),
            ("users = \"alice\"", "users = \"alice\" is a string, but must be an array of strings"),
            ("users = [\"alice\", 3]", "element 2 of users (3) is an integer, but every element must be a string"),
            ("users = [\"al ice\"]", "users contains \"al ice\", which is not a valid unix user name"),
            ("executable = \"demo\"", "executable = \"demo\" is not an absolute path"),
            ("when_in_use_usage = \"\"", "when_in_use_usage is empty"),
            ("always_usage = \"   \"", "always_usage is empty"),
            ("dbus_name = \"demo\"", "dbus_name = \"demo\" is not a valid D-Bus well-known name"),
            ("dbus_name = \"org.3example.Demo\"", "is not a valid D-Bus well-known name"),
            ("dbus_name = \":1.42\"", "is not a valid D-Bus well-known name"),
        ])
    func invalidValue(_ line: String, _ problem: String) throws {
        let directory = try ConfigurationDirectory()
        let keys = ["app_id", "users", "executable", "when_in_use_usage", "always_usage", "dbus_name"]
        let key = try #require(keys.first { line.hasPrefix($0 + " ") })
        // The valid file with the key under test replaced, on line 4 after three comment lines.
        let others = Self.demo.split(separator: "\n").filter { !$0.hasPrefix(key + " ") }
        try directory.write("# one\n# two\n# three\n\(line)\n" + others.joined(separator: "\n"), to: "apps.d/demo.toml")
        let error = try #require(directory.loadError())
        #expect(error.description.hasPrefix("\(directory.path)/apps.d/demo.toml:4: "))
        #expect(error.description.contains(problem))
    }

    @Test("an unknown key is a warning with its line")
    func unknownKey() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(Self.demo + "\nusage = \"x\"\n", to: "apps.d/demo.toml")
        let configuration = try directory.load()
        #expect(configuration.apps.count == 1)
        #expect(
            configuration.warnings.map(\.description) == [
                "\(directory.path)/apps.d/demo.toml:7: unknown key \"usage\" is ignored (known keys: app_id, users, "
                    + "executable, when_in_use_usage, always_usage, dbus_name, devices)"
            ])
    }

    @Test("a syntax error in an app file names that file")
    func syntaxError() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("app_id = \"x\"\nusers = [\"alice\"\n", to: "apps.d/x.toml")
        let error = try #require(directory.loadError())
        #expect(error.file == directory.path + "/apps.d/x.toml")
        #expect(error.description.contains("TOML syntax error"))
    }
}
