import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import DBus
import Foundation
import GRDB
import Testing

@Suite("Beacon kinds in the daemon: D-Bus dictionaries, [devices], the state database")
struct BeaconKindsServiceTests {
    static let id1 = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
    static let namespace = EddystoneNamespace(hex: "edd1ebeac04e5defa017")!
    static let instance = EddystoneInstance(hex: "0123456789ab")!
    static let key = try! IdentityResolvingKey(parsing: "ec0234a357c8ad05341010a60a397d9b")

    static var constraints: [BeaconIdentityConstraint] {
        [
            try! BeaconIdentityConstraint(uuid: id1, major: 1, minor: 2),
            try! BeaconIdentityConstraint(kind: .altBeacon, uuid: id1),
            try! BeaconIdentityConstraint(kind: .altBeacon, uuid: id1, major: 1, minor: 2),
            .eddystone(namespace: namespace),
            .eddystone(namespace: namespace, instance: instance),
        ]
    }

    @Test func regionDictionariesRoundTripForEveryKind() throws {
        for constraint in Self.constraints {
            let region = BeaconRegion(identifier: "r", constraint: constraint, notifyOnExit: false)
            #expect(try BeaconDictionaries.region(from: BeaconDictionaries.dictionary(region)) == region, "\(constraint)")
        }
        // A private device is read by name and resolved by the daemon; it is written back under that name.
        let device = BeaconRegion(identifier: "p", constraint: .privateDevice(named: "alice-phone"))
        let read = try BeaconDictionaries.region(from: BeaconDictionaries.dictionary(device))
        #expect(read.constraint.deviceName == "alice-phone" && read.constraint.kind == .privateDevice)
        let resolved = read.constraint.resolvingDevice(fingerprint: Self.key.fingerprint)
        #expect(resolved.matches(.privateDevice(fingerprint: Self.key.fingerprint)))
        #expect(!read.constraint.matches(.privateDevice(fingerprint: Self.key.fingerprint)), "unresolved matches nothing")
        #expect(BeaconDictionaries.dictionary(resolved).vardictEntries?[BeacondKey.device] == .string("alice-phone"))
    }

    @Test func anIBeaconDictionaryIsWhatItWasBeforeKinds() throws {
        let entries = try #require(BeaconDictionaries.dictionary(Self.constraints[0]).vardictEntries)
        #expect(Set(entries.keys) == [BeacondKey.uuid, BeacondKey.major, BeacondKey.minor])
        let eddystone = try #require(BeaconDictionaries.dictionary(Self.constraints[4]).vardictEntries)
        #expect(
            eddystone == [
                BeacondKey.kind: .string("Eddystone"), BeacondKey.namespace: .string("edd1ebeac04e5defa017"),
                BeacondKey.instance: .string("0123456789ab"),
            ])
    }

    @Test func rangedBeaconsCarryTheirKindAndTelemetry() throws {
        var beacon = RangedBeacon(
            identity: .eddystone(namespace: Self.namespace, instance: Self.instance), rssi: -60, accuracy: 1,
            proximity: .near, measuredPower: -59, timestamp: Timestamp(microsecondsSinceEpoch: 1))
        beacon.telemetry = EddystoneTelemetry(batteryMillivolts: 2900, temperature: -3.5, advertisingCount: 0, uptimeTenths: 0)
        let entries = try #require(BeaconDictionaries.dictionary(beacon).vardictEntries)
        #expect(entries[BeacondKey.batteryMillivolts] == .uint16(2900))
        #expect(entries[BeacondKey.temperature] == .double(-3.5))
        #expect(entries[BeacondKey.instance] == .string("0123456789ab"))
        let phone = RangedBeacon(
            identity: .privateDevice(fingerprint: Self.key.fingerprint), rssi: -60, accuracy: 1, proximity: .near,
            measuredPower: -59, timestamp: Timestamp(microsecondsSinceEpoch: 1))
        let named = try #require(BeaconDictionaries.dictionary(phone, deviceName: "alice-phone").vardictEntries)
        #expect(named[BeacondKey.device] == .string("alice-phone"))
        #expect(named[BeacondKey.uuid] == nil)
    }

    @Test func devicesAreReadFromAppsAndTheAdministrator() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(
            """
            app_id = "org.example.Demo"
            users = ["root"]

            [devices]
            alice-phone = "irk:ec0234a357c8ad05341010a60a397d9b"
            """, to: "apps.d/demo.toml")
        try directory.write("[devices]\nshared-tablet = \"bluez:9B7D390AA610103405ADC857A33402EC\"\n", to: "devices.d/shared.toml")
        chmod(directory.path + "/apps.d/demo.toml", 0o640)
        chmod(directory.path + "/devices.d/shared.toml", 0o644)
        let configuration = try directory.load()
        #expect(configuration.apps["org.example.Demo"]?.devices == ["alice-phone": Self.key])
        #expect(configuration.devices == ["shared-tablet": Self.key])
        // The administrator's file is readable by every user: said, with the fix.
        let warnings = configuration.warnings.map(\.description)
        #expect(warnings.contains { $0.contains("devices.d/shared.toml") && $0.contains("chmod 0640") })
        // demo.toml (0640) is not said to be readable; that its phone is the tablet's key under another name is.
        #expect(!warnings.contains { $0.contains("apps.d/demo.toml") && $0.contains("chmod") })
        #expect(warnings.contains { $0.contains("apps.d/demo.toml") && $0.contains("one key is declared under 2 names") })
    }

    @Test func aBrokenKeyNamesFileLineAndFix() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("# phones\n[devices]\nok = \"irk:ec0234a357c8ad05341010a60a397d9b\"\nbad = \"ec0234a357\"\n", to: "devices.d/a.toml")
        let error = try #require(directory.loadError())
        #expect(error.file.hasSuffix("devices.d/a.toml"))
        #expect(error.line == 4)
        #expect(error.message.contains("is 10 hex digits (5 bytes), but an Identity Resolving Key is 16 bytes"))
        try directory.write("[devices]\n\"Alice Phone\" = \"irk:ec0234a357c8ad05341010a60a397d9b\"\n", to: "devices.d/a.toml")
        #expect(directory.loadError()?.message.contains("is not a device name") == true)
        try directory.write("[devices]\nok = \"irk:ec0234a357c8ad05341010a60a397d9b\"\n", to: "devices.d/a.toml")
        try directory.write("[devices]\nok = \"irk:00112233445566778899aabbccddeeff\"\n", to: "devices.d/b.toml")
        #expect(directory.loadError()?.message.contains("already declared") == true)
    }

    @Test func regionsOfEveryKindSurviveTheStateDatabase() throws {
        let store = try SQLiteStateDatabase.inMemory()
        var regions = Self.constraints.enumerated().map { index, constraint in
            BeaconRegion(identifier: "r\(index)", constraint: constraint)
        }
        regions.append(BeaconRegion(identifier: "phone", constraint: .privateDevice(fingerprint: Self.key.fingerprint, name: "alice-phone")))
        try store.apply(
            regions.map {
                .saveRegion(
                    StoredRegion(
                        client: 1, appID: "org.example.Demo",
                        monitored: MonitoredRegion(region: $0, state: .inside, lastSeen: nil, lastDeterminedState: .inside)))
            })
        let loaded = try store.loadRegions()
        #expect(loaded.problems.isEmpty)
        #expect(loaded.regions.map(\.monitored.region) == regions)
    }

    @Test func anIBeaconOnlyDatabaseMigratesUnchanged() throws {
        // A database as 0.4.0 left it (migrations up to v6) with an iBeacon region and a queued event.
        let database = try DatabaseQueue()
        try SQLiteStateDatabaseSchema.migrator.migrate(database, upTo: "v6: region room, entry and exit delays")
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO monitored_region (client, app_id, identifier, uuid, major, minor, notify_on_entry,
                        notify_on_exit, state, last_determined_state) VALUES
                        (3, 'org.example.Demo', 'lobby', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, NULL, 1, 1, 'inside', 'inside')
                    """)
            try db.execute(
                sql: """
                    INSERT INTO queued_event (app_id, kind, identifier, uuid, major, minor, notify_on_entry, notify_on_exit,
                        timestamp_us) VALUES
                        ('org.example.Demo', 'didExitRegion', 'lobby', 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0', 1, NULL, 1, 1, 5)
                    """)
        }
        try SQLiteStateDatabaseSchema.migrator.migrate(database)
        let expected = BeaconRegion(
            identifier: "lobby", constraint: .matching(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1))
        try database.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM monitored_region") + Row.fetchAll(db, sql: "SELECT * FROM queued_event")
            #expect(rows.count == 2)
            for row in rows { #expect(SQLiteStateDatabase.region(row) == expected) }
        }
    }
}
