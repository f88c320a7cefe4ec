import BeacondAPI
import DBus
import Foundation
import TestKit
import Testing

/// The real binary: help, exit statuses, and every command against a fake beacond on a private bus.
@Suite("beaconctl (the real binary)")
struct CLITests {
    static func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
    }

    @Test func helpDocumentsExitStatusesBusAndExamples() throws {
        let root = try CLI.run(["--help"])
        #expect(root.status == 0)
        for needle in ["Exit status", "64", "69", "77", "BEACOND_BUS", "--bus", "Examples", "beacond-admin", "--json"] {
            #expect(root.stdout.contains(needle), "beaconctl --help lacks \(needle)")
        }
        for command in [
            ["status"], ["beacons"], ["regions"], ["clients"], ["events"], ["auth", "list"], ["auth", "grant"],
            ["auth", "deny"], ["auth", "reset"], ["services"], ["client"],
        ] {
            let help = try CLI.run(command + ["--help"])
            #expect(help.status == 0)
            for needle in ["Exit status", "Example", "--bus"] {
                #expect(help.stdout.contains(needle), "beaconctl \(command.joined(separator: " ")) --help lacks \(needle)")
            }
        }
        let doctor = try CLI.run(["doctor", "--help"])
        #expect(doctor.stdout.replacingOccurrences(of: "\n", with: " ").contains("Exits 0 when every check passes, 1 otherwise"))
    }

    @Test func versionIsTheOneVersion() throws {
        let run = try CLI.run(["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == BeacondVersion.current + "\n")
    }

    @Test func missingBusIs69WithTheAddressAndTheFix() throws {
        let run = try CLI.run(["--bus", "unix:path=/nonexistent/beacond-bus", "status"])
        #expect(run.status == 69)
        #expect(run.stderr.hasPrefix("beaconctl: cannot connect to the bus at unix:path=/nonexistent/beacond-bus"))
        #expect(run.stderr.contains("--bus"))
        #expect(run.stdout.isEmpty)
        let fromEnvironment = try CLI.run(["clients"], environment: ["BEACOND_BUS": "unix:path=/nonexistent/from-env"])
        #expect(fromEnvironment.status == 69)
        #expect(fromEnvironment.stderr.contains("unix:path=/nonexistent/from-env"))
        let afterSubcommand = try CLI.run(["auth", "grant", "--bus", "unix:path=/nonexistent/x", "app", "always"])
        #expect(afterSubcommand.status == 69)
    }

    @Test func usageErrorsAre64() throws {
        let cases: [[String]] = [
            ["client", "--app", "a", "monitor", "not-a-uuid"],
            ["client", "--app", "a", "range", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0::5"],
            ["client", "--app", "a", "range", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--identifier", "x"],
            ["auth", "grant", "a", "sometimes"],
            ["services", "maybe"],
            ["events", "--count", "0"],
            ["frobnicate"],
        ]
        for arguments in cases {
            let run = try CLI.run(["--bus", "unix:path=/nonexistent/never-used"] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
        }
        let malformed = try CLI.run(["client", "--app", "a", "monitor", "not-a-uuid"])
        #expect(malformed.stderr.contains("'not-a-uuid' is not UUID[:MAJOR[:MINOR]]"))
    }

    /// `--count -1` is a count below 1, said so (ArgumentParser took `-1` for an option and said the value was missing).
    @Test func aNegativeCountIsRefusedAsSuch() throws {
        for arguments in [
            ["events", "--count", "-1"], ["client", "--app", "x", "monitor", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--count", "-1"],
        ] {
            let run = try CLI.run(arguments)
            #expect(run.status == 64, "\(arguments)")
            #expect(run.stderr.contains("--count must be at least 1 (got -1)"), "\(arguments): \(run.stderr)")
        }
    }

    @Test func daemonNotRunningIs69AndDoctorSaysSo() throws {
        let bus = try PrivateBus()
        let run = try CLI.run(["--bus", bus.address, "status"])
        #expect(run.status == 69)
        #expect(run.stderr.contains("beacond is not running"))
        // A private bus: started by hand there, not by systemctl.
        #expect(run.stderr.contains("start it on that bus: beacond --bus '\(bus.address)'"), "\(run.stderr)")
        #expect(!run.stderr.contains("systemctl"), "\(run.stderr)")
        let doctor = try CLI.run(["--bus", bus.address, "doctor"])
        #expect(doctor.status == 1)
        #expect(doctor.lines.first?.hasPrefix("✓ bus reachable: the bus at \(bus.address)") == true)
        #expect(doctor.lines.dropFirst().first == "✗ beacond running: nobody owns org.beacond on the bus at \(bus.address)")
        #expect(doctor.stdout.contains("fix: start it on that bus: beacond --bus '\(bus.address)'"), "\(doctor.stdout)")
        let unreachable = try CLI.run(["--bus", "unix:path=/nonexistent/bus", "doctor", "--json"])
        #expect(unreachable.status == 1)
        let report = try Self.json(unreachable.stdout)
        #expect(report["Passed"] as? Bool == false)
    }

    @Test func statusForPeopleAndForScripts() throws {
        let fake = try FakeBeacond(appStatus: BeacondStatus.authorizedAlways)
        let human = try CLI.run(["--bus", fake.bus.address, "status"])
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.lines.first?.hasPrefix("beacond 0.2.0, up 2 h 5 min") == true)
        #expect(human.lines.contains("location services  on"))
        #expect(human.lines.contains { $0.contains("lobby") && $0.contains("inside") && $0.contains("5 min ago") })
        let json = try CLI.run(["status", "--json", "--bus", fake.bus.address])
        #expect(json.status == 0)
        #expect(json.lines.count == 1)
        let status = try Self.json(json.stdout)
        #expect(status["Version"] as? String == "0.2.0")
        #expect(status["LocationServicesEnabled"] as? Bool == true)
        let regions = try #require(status["Regions"] as? [[String: Any]])
        #expect(regions.first?["Identifier"] as? String == "lobby")
        #expect(regions.first?["Major"] as? Int == 1)
        #expect((regions.first?["LastSeenISO8601"] as? String)?.hasSuffix("Z") == true)
        let regionsJSON = try CLI.run(["regions", "--json", "--bus", fake.bus.address])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(regionsJSON.stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["Identifier"] as? String } == ["lobby", "garage"])
    }

    @Test func accessDeniedIs77WithTheDaemonsMessage() throws {
        let fake = try FakeBeacond(denyAdmin: true)
        for command in [["status"], ["clients"], ["auth", "grant", "com.example.door", "always"], ["events"]] {
            let run = try CLI.run(["--bus", fake.bus.address] + command)
            #expect(run.status == 77, "\(command)")
            #expect(
                run.stderr == "beaconctl: Admin1 is for root and members of beacond-admin; "
                    + "add yourself: sudo usermod -aG beacond-admin $USER\n")
        }
        let doctor = try CLI.run(["--bus", fake.bus.address, "doctor"])
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("✗ admin access (org.beacond.Admin1)"))
        #expect(doctor.stdout.contains("fix: run as root, or join the admin group"))
    }

    @Test func authAndServicesCallTheAdminAPI() throws {
        let fake = try FakeBeacond()
        let grant = try CLI.run(["--bus", fake.bus.address, "auth", "grant", "com.example.door", "when-in-use"])
        #expect(grant.status == 0)
        #expect(grant.stdout == "com.example.door: authorizedWhenInUse (was notDetermined)\n")
        #expect(try CLI.run(["--bus", fake.bus.address, "auth", "deny", "com.example.door"]).status == 0)
        #expect(try CLI.run(["--bus", fake.bus.address, "auth", "reset", "com.example.door"]).status == 0)
        #expect(try CLI.run(["--bus", fake.bus.address, "services", "off"]).stdout == "location services: off\n")
        // Each auth verb reads the app's status before and after its change, to say what the change did.
        #expect(
            fake.log.all == [
                "ListApps", "SetAuthorization com.example.door authorizedWhenInUse", "ListApps",
                "ListApps", "SetAuthorization com.example.door denied", "ListApps",
                "ListApps", "ResetAuthorization com.example.door", "ListApps",
                "SetLocationServicesEnabled false",
            ])
        let unknown = try CLI.run(["--bus", fake.bus.address, "auth", "grant", "org.nobody", "always"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "beaconctl: no app 'org.nobody' is declared\n")
        let list = try CLI.run(["--bus", fake.bus.address, "auth", "list", "--json"])
        let object = try Self.json(list.stdout)
        let apps = try #require(object["Apps"] as? [[String: Any]])
        #expect(apps.first?["AuthorizationStatus"] as? String == "denied")
        #expect(object["PendingRequests"] as? [Any] != nil)
    }

    @Test func eventsCountJSONLinesThenUnwatch() throws {
        let fake = try FakeBeacond(eventsOnWatch: [
            (BeacondEventKind.scanningChanged, [BeacondEventKey.scanning: .boolean(true)]),
            (
                BeacondEventKind.didEnterRegion,
                [
                    BeacondEventKey.appID: .string(Samples.app),
                    BeacondEventKey.region: .vardict(Samples.region("lobby")),
                ]
            ),
            (BeacondEventKind.configurationRejected, [BeacondEventKey.error: .string("never printed")]),
        ])
        let run = try CLI.run(["--bus", fake.bus.address, "events", "--json", "--count", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        try #require(run.lines.count == 2)
        let first = try Self.json(run.lines[0]), second = try Self.json(run.lines[1])
        #expect(first["Kind"] as? String == "ScanningChanged")
        #expect((first["Data"] as? [String: Any])?["Scanning"] as? Bool == true)
        #expect((first["TimeISO8601"] as? String)?.hasSuffix("Z") == true)
        #expect(second["Kind"] as? String == "DidEnterRegion")
        let region = try #require((second["Data"] as? [String: Any])?["Region"] as? [String: Any])
        #expect(region["Identifier"] as? String == "lobby")
        #expect(fake.log.all == ["WatchEvents", "UnwatchEvents"])
        let human = try CLI.run(["--bus", fake.bus.address, "events", "--count", "2"])
        try #require(human.lines.count == 2)
        #expect(human.lines[1].hasSuffix("  DidEnterRegion  com.example.door  region=lobby (\(Samples.uuid):1)"))
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func eventsStopCleanlyOnSignals(signal: Int32) throws {
        let fake = try FakeBeacond()
        let live = try CLI.start(["--bus", fake.bus.address, "events"])
        #expect(fake.log.wait(for: "WatchEvents"))
        live.signal(signal)
        let run = live.finish()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(fake.log.wait(for: "UnwatchEvents"))
    }

    @Test func eventsEndWith69WhenTheDaemonLeaves() throws {
        let fake = try FakeBeacond(eventsOnWatch: [(BeacondEventKind.scanningChanged, [BeacondEventKey.scanning: .boolean(false)])])
        let live = try CLI.start(["--bus", fake.bus.address, "events"])
        // Its first line means beaconctl has its WatchEvents reply and is receiving.
        #expect(live.nextLine()?.hasSuffix("ScanningChanged  -  scanning=off") == true)
        fake.stop()
        let run = live.finish()
        #expect(run.status == 69)
        #expect(run.stderr.contains("beacond left the bus at \(fake.bus.address)"))
    }

    @Test func beaconsOncePrintsOneCycleAsPlainLines() throws {
        let cycle: [String: DBusValue] = [
            BeacondEventKey.appID: .string(Samples.app), BeacondEventKey.client: .objectPath("/org/beacond/client/1"),
            BeacondEventKey.constraint: .vardict([BeacondKey.uuid: .string(Samples.uuid)]),
            BeacondEventKey.beacons: Samples.dictionaries([
                Samples.beacon(minor: 2, rssi: -58, accuracy: 0.92, proximity: "near"),
                Samples.beacon(minor: 3, rssi: 0, accuracy: -1, proximity: "unknown"),
            ]),
        ]
        let fake = try FakeBeacond(eventsOnWatch: [
            (BeacondEventKind.scanningChanged, [BeacondEventKey.scanning: .boolean(true)]),
            (BeacondEventKind.didRangeBeacons, cycle), (BeacondEventKind.didRangeBeacons, cycle),
        ])
        let run = try CLI.run(["--bus", fake.bus.address, "beacons", "--once"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 2)
        #expect(run.lines.first?.hasSuffix("  com.example.door  \(Samples.uuid)  1:2 -58 dBm 0.92 m near") == true)
        #expect(run.lines.last?.hasSuffix("  1:3 0 dBm unknown unknown") == true)
        #expect(run.stderr.contains("no client is ranging yet"))
        let json = try CLI.run(["--bus", fake.bus.address, "beacons", "--once", "--json"])
        let beacons = try #require((try Self.json(json.stdout)["Data"] as? [String: Any])?["Beacons"] as? [[String: Any]])
        #expect(beacons.first?["Accuracy"] as? Double == 0.92)
        #expect(beacons.first?["Proximity"] as? String == "near")
    }

    /// On a terminal (util-linux `script` gives the binary a pty) each cycle clears the screen and redraws the table.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func beaconsRedrawATableOnATerminal() throws {
        let cycle: [String: DBusValue] = [
            BeacondEventKey.appID: .string(Samples.app), BeacondEventKey.client: .objectPath("/org/beacond/client/1"),
            BeacondEventKey.constraint: .vardict([BeacondKey.uuid: .string(Samples.uuid)]),
            BeacondEventKey.beacons: Samples.dictionaries([Samples.beacon(minor: 2, rssi: -58, accuracy: 0.92, proximity: "near")]),
        ]
        let fake = try FakeBeacond(eventsOnWatch: [(BeacondEventKind.didRangeBeacons, cycle)])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "'\(try CLI.url().path)' --bus '\(fake.bus.address)' beacons --once", "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let screen = try #require(text.components(separatedBy: "\u{1B}[H\u{1B}[2J").last)
        let lines = screen.components(separatedBy: "\r\n")
        #expect(lines.first?.hasSuffix("— 1 ranging request") == true, "\(lines)")
        #expect(lines.dropFirst().first?.hasPrefix("UUID                                  MAJOR  MINOR  RSSI  ACCURACY m") == true)
        #expect(lines.dropFirst(2).first == "\(Samples.uuid)      1      2   -58        0.92  near       com.example.door  /org/beacond/client/1")
    }

    /// The whole flow of docs/authorization.md: register → notDetermined → request → pending → an administrator grants →
    /// AuthorizationChanged → StartMonitoring → events; then it cleans up.
    @Test func clientWaitsForAnAdministratorThenMonitors() throws {
        let fake = try FakeBeacond()
        let live = try CLI.start([
            "--bus", fake.bus.address, "client", "--app", Samples.app, "monitor", "\(Samples.uuid):1",
            "--identifier", "door", "--count", "2", "--json",
        ])
        let registered = try Self.json(try #require(live.nextLine()))
        #expect(registered["Kind"] as? String == "ClientRegistered")
        #expect((registered["Data"] as? [String: Any])?["Client"] as? String == "/org/beacond/client/1")
        // The registration's AuthorizationChanged came before the request's reply, so it is printed before it.
        let current = try Self.json(try #require(live.nextLine()))
        #expect(current["Kind"] as? String == "AuthorizationChanged")
        #expect((current["Data"] as? [String: Any])?["Status"] as? String == "notDetermined")
        let requested = try Self.json(try #require(live.nextLine()))
        #expect(requested["Kind"] as? String == "AuthorizationRequested")
        #expect((requested["Data"] as? [String: Any])?["Status"] as? String == "notDetermined")
        #expect((requested["Data"] as? [String: Any])?["Request"] as? String == "always")
        let grant = try CLI.run(["--bus", fake.bus.address, "auth", "grant", Samples.app, "always"])
        #expect(grant.status == 0)
        let run = live.finish()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("waiting for an administrator: beaconctl auth grant com.example.door always"))
        let kinds = try run.lines.map { try Self.json($0)["Kind"] as? String ?? "?" }
        #expect(
            kinds == [
                "ClientRegistered", "AuthorizationChanged", "AuthorizationRequested", "AuthorizationChanged", "DidStartMonitoring",
                "DidDetermineState", "DidEnterRegion",
            ])
        try #require(run.lines.count == 7)
        let granted = try Self.json(run.lines[3])
        #expect((granted["Data"] as? [String: Any])?["Status"] as? String == "authorizedAlways")
        #expect((granted["Data"] as? [String: Any])?["Client"] as? String == "/org/beacond/client/1")
        // `auth grant` reads the status before and after its change; the one after races the client's
        // StartMonitoring (both follow the grant), so it is checked apart from the client's calls.
        var calls = fake.log.all
        let set = try #require(calls.firstIndex(of: "SetAuthorization com.example.door authorizedAlways"))
        let after = try #require(calls[(set + 1)...].firstIndex(of: "ListApps"))
        calls.remove(at: after)
        #expect(
            calls == [
                "RegisterClient com.example.door", "Request always",
                "ListApps", "SetAuthorization com.example.door authorizedAlways",
                "StartMonitoring door Identifier,Major,UUID", "StopMonitoring door", "Close /org/beacond/client/1",
            ])
    }

    @Test func clientRefusedByTheDaemonPrintsItsMessage() throws {
        let fake = try FakeBeacond(appStatus: BeacondStatus.authorizedWhenInUse)
        let run = try CLI.run(["--bus", fake.bus.address, "client", "--app", Samples.app, "monitor", Samples.uuid])
        #expect(run.status == 1)
        #expect(
            run.stderr == "beaconctl: monitoring needs authorizedAlways; this app is authorizedWhenInUse. Call "
                + "RequestAlwaysAuthorization or ask an administrator: beaconctl auth grant com.example.door always\n")
        #expect(fake.log.all.last == "Close /org/beacond/client/1")
        let unknown = try CLI.run(["--bus", fake.bus.address, "client", "--app", "org.nobody", "range", Samples.uuid])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no app 'org.nobody' is declared"))
    }

    @Test func clientRangesForCountCycles() throws {
        let fake = try FakeBeacond(appStatus: BeacondStatus.authorizedWhenInUse)
        let run = try CLI.run(["--bus", fake.bus.address, "client", "--app", Samples.app, "range", "\(Samples.uuid):1", "--count", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.filter { $0.contains("DidRangeBeacons") }.count == 2)
        #expect(run.stdout.contains("    \(Samples.uuid)  1:2 -58 dBm 0.92 m near"))
        #expect(
            fake.log.all == [
                "RegisterClient com.example.door", "Request whenInUse", "StartRanging", "StopRanging",
                "Close /org/beacond/client/1",
            ])
    }

    @Test func doctorExplainsAPendingRequest() throws {
        let fake = try FakeBeacond()
        let client = try CLI.start(["--bus", fake.bus.address, "client", "--app", Samples.app, "monitor", Samples.uuid])
        #expect(client.line(containing: "waiting for an administrator") != nil)
        let doctor = try CLI.run(["--bus", fake.bus.address, "doctor", "--app", Samples.app])
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("✓ beacond running"))
        #expect(doctor.stdout.contains("✓ location services on: on"))
        #expect(doctor.stdout.contains("✗ com.example.door authorized: notDetermined: its always request waits for an administrator"))
        #expect(doctor.stdout.contains("    fix: beaconctl auth grant com.example.door always"))
        client.signal(SIGINT)
        #expect(client.finish().status == 0)
        #expect(fake.log.all.last == "Close /org/beacond/client/1", "interrupted while waiting, it still closes its client")
    }
}
