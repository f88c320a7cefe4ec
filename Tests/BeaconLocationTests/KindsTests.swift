@testable import BeaconLocation
// Only what makes advertisements and private addresses: BeaconKit's own constraint and kind have the library's names.
import enum BeaconKit.BeaconAdvertisingData
import struct BeaconKit.BeaconIdentity
import struct BeaconKit.EddystoneInstance
import struct BeaconKit.EddystoneNamespace
import struct BeaconKit.EddystoneTelemetry
import struct BeaconKit.IdentityResolvingKey
import BeacondAPI
import DBus
import Foundation
import Testing

/// Every beacon kind through the library: the dictionaries it sends and reads (pure), then the real beacond on a
/// private bus monitoring an Eddystone namespace, ranging an AltBeacon and an Eddystone with telemetry, and following
/// a phone by its Identity Resolving Key across address rotations.
@Suite("BeaconLocation: every beacon kind", .serialized)
struct KindsTests {
    static let id1 = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
    static let namespace = "edd1ebeac04e5defa017"
    static let instance = "0123456789ab"

    // MARK: The dictionaries (pure)

    @Test func eachKindSendsItsOwnKeys() throws {
        #expect(
            BeaconIdentityConstraint.altBeacon(id1: Self.id1, id2: 1, id3: 2).dictionary == [
                BeacondKey.kind: .string("AltBeacon"), BeacondKey.uuid: .string(Self.id1.uuidString),
                BeacondKey.major: .uint16(1), BeacondKey.minor: .uint16(2),
            ])
        #expect(
            try BeaconIdentityConstraint.eddystone(namespace: "EDD1EBEAC04E5DEFA017").dictionary == [
                BeacondKey.kind: .string("Eddystone"), BeacondKey.namespace: .string(Self.namespace),
            ], "hex of either case is sent as beacond writes it, lowercase")
        #expect(
            try BeaconIdentityConstraint.eddystone(namespace: Self.namespace, instance: Self.instance).dictionary[
                BeacondKey.instance] == .string(Self.instance))
        #expect(
            try BeaconIdentityConstraint.privateDevice(named: "alice-phone").dictionary == [
                BeacondKey.kind: .string("PrivateDevice"), BeacondKey.device: .string("alice-phone"),
            ])
        // An iBeacon's dictionary has no Kind: what a client sent before kinds, byte for byte.
        #expect(BeaconIdentityConstraint(uuid: World.demoUUID, major: 1).dictionary[BeacondKey.kind] == nil)
    }

    @Test func kindsAreNeverConfused() throws {
        let iBeacon = BeaconIdentityConstraint(uuid: Self.id1, major: 1, minor: 2)
        let altBeacon = BeaconIdentityConstraint.altBeacon(id1: Self.id1, id2: 1, id3: 2)
        #expect(iBeacon != altBeacon, "the same numbers in another kind are another beacon")
        #expect(iBeacon.kind == .iBeacon && altBeacon.kind == .altBeacon)
        let eddystone = try BeaconIdentityConstraint.eddystone(namespace: Self.namespace)
        #expect(eddystone.uuid == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) && eddystone.major == nil)
        for constraint in [iBeacon, altBeacon, eddystone, try .privateDevice(named: "alice-phone")] {
            #expect(BeaconIdentityConstraint(dictionary: constraint.dictionary) == constraint, "\(constraint)")
            #expect(try BeaconIdentityConstraint(parsing: constraint.description) == constraint, "\(constraint)")
            let region = BeaconRegion(beaconIdentityConstraint: constraint, identifier: "r")
            #expect(BeaconRegion(dictionary: region.dictionary) == region && region.kind == constraint.kind)
        }
        #expect(
            BeaconIdentityConstraint(dictionary: [BeacondKey.kind: .string("Bluetooth"), BeacondKey.uuid: .string(Self.id1.uuidString)])
                == nil, "a kind this library does not know is not read as an iBeacon")
    }

    @Test func textFormsAsBeaconctlWritesThem() throws {
        #expect(
            try BeaconIdentityConstraint(parsing: "altbeacon:\(Self.id1.uuidString):7").description
                == "altbeacon:\(Self.id1.uuidString):7")
        #expect(try BeaconIdentityConstraint(parsing: "eddystone:\(Self.namespace):\(Self.instance)").instance == Self.instance)
        #expect(try BeaconIdentityConstraint(parsing: World.demoUUID.uuidString + ":1:2").kind == .iBeacon)
        #expect(try BeaconIdentityConstraint(parsing: "device:alice-phone").device == "alice-phone")
    }

    @Test func badIdentitiesAreRefusedWithTheForm() {
        let cases: [(() throws(BeaconLocationError) -> BeaconIdentityConstraint, String)] = [
            ({ () throws(BeaconLocationError) in try .eddystone(namespace: "edd1ebeac04e5defa0") }, "20 hex digits"),
            // Fullwidth digits are hex digits to Character, not to beacond.
            ({ () throws(BeaconLocationError) in try .eddystone(namespace: "edd1ebeac04e5defa0１") }, "20 hex digits"),
            ({ () throws(BeaconLocationError) in try .eddystone(namespace: Self.namespace, instance: "xyz") }, "12 hex digits"),
            ({ () throws(BeaconLocationError) in try .privateDevice(named: "Alice Phone") }, "a-z, 0-9"),
            ({ () throws(BeaconLocationError) in try .privateDevice(named: "") }, "a-z, 0-9"),
            ({ () throws(BeaconLocationError) in try BeaconIdentityConstraint(parsing: "eddystone:") }, "20 hex digits"),
            ({ () throws(BeaconLocationError) in try BeaconIdentityConstraint(parsing: "altbeacon:nope") }, "altbeacon:ID1"),
            ({ () throws(BeaconLocationError) in try BeaconIdentityConstraint(parsing: "device:a:b") }, "device:NAME"),
            ({ () throws(BeaconLocationError) in try BeaconIdentityConstraint(parsing: "\(World.demoUUID.uuidString):x") }, "0...65535"),
        ]
        for (make, words) in cases {
            let error = #expect(throws: BeaconLocationError.self) { try make() }
            #expect(error?.beacondError == .invalidRegion)
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "") should say \(words)")
        }
    }

    @Test("a beacon on the floor plan has its typed position; without X or Y, none")
    func positions() throws {
        let placed = try #require(
            Beacon(dictionary: [
                BeacondKey.uuid: .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), BeacondKey.major: .uint16(1), BeacondKey.minor: .uint16(2),
                BeacondKey.position: .variant(
                    .vardict([
                        BeacondPositionKey.x: .double(2.5), BeacondPositionKey.y: .double(4.25), BeacondPositionKey.z: .double(1),
                        BeacondPositionKey.floor: .string("ground"), BeacondPositionKey.accuracy: .double(1.8),
                        BeacondPositionKey.fixes: .uint32(4),
                    ])),
            ]))
        let position = try #require(placed.position)
        #expect((position.x, position.y, position.z, position.floor, position.accuracy, position.fixes) == (2.5, 4.25, 1, "ground", 1.8, 4))
        let broken = Beacon(dictionary: [
            BeacondKey.uuid: .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), BeacondKey.major: .uint16(1), BeacondKey.minor: .uint16(2),
            BeacondKey.position: .vardict([BeacondPositionKey.y: .double(1)]),
        ])
        #expect(broken != nil && broken?.position == nil)
    }

    @Test func beaconsOfEveryKind() throws {
        let eddystone = try #require(
            Beacon(dictionary: [
                BeacondKey.kind: .string("Eddystone"), BeacondKey.namespace: .string(Self.namespace),
                BeacondKey.instance: .string(Self.instance), BeacondKey.batteryMillivolts: .uint16(2_950),
                BeacondKey.temperature: .double(21.5), BeacondKey.rssi: .int16(-60),
            ]))
        #expect(eddystone.kind == .eddystone && eddystone.namespace == Self.namespace && eddystone.instance == Self.instance)
        #expect(eddystone.batteryMillivolts == 2_950 && eddystone.temperature == 21.5 && eddystone.rssi == -60)
        #expect(eddystone.identityConstraint == (try .eddystone(namespace: Self.namespace, instance: Self.instance)))
        #expect(
            Beacon(dictionary: [BeacondKey.kind: .string("Eddystone"), BeacondKey.namespace: .string(Self.namespace)]) == nil,
            "a ranged Eddystone has its instance")
        let phone = try #require(
            Beacon(dictionary: [BeacondKey.kind: .string("PrivateDevice"), BeacondKey.device: .string("alice-phone")]))
        #expect(phone.device == "alice-phone" && phone.batteryMillivolts == nil && phone.major == 0)
        let altBeacon = try #require(
            Beacon(dictionary: [
                BeacondKey.kind: .string("AltBeacon"), BeacondKey.uuid: .string(Self.id1.uuidString),
                BeacondKey.major: .uint16(3), BeacondKey.minor: .uint16(4),
            ]))
        #expect(altBeacon.identityConstraint == .altBeacon(id1: Self.id1, id2: 3, id3: 4))
    }

    // MARK: Against the real beacond

    static func eddystoneLine(tlm: Bool = false) -> String {
        let namespace = EddystoneNamespace(hex: Self.namespace)!
        let instance = EddystoneInstance(hex: Self.instance)!
        let data =
            tlm
            ? BeaconAdvertisingData.eddystoneTLM(
                EddystoneTelemetry(batteryMillivolts: 3_010, temperature: 22.25, advertisingCount: 10, uptimeTenths: 100))
            : BeaconAdvertisingData.eddystoneUID(.eddystone(namespace: namespace, instance: instance), txPowerAtZero: -18)
        return World.reportLine(data: data, address: 0xC0FF_EE00_0E0D, addressType: 1)
    }

    static func altBeaconLine() -> String {
        let identity = BeaconIdentity(kind: .altBeacon, uuid: id1, major: 3, minor: 4)
        return World.reportLine(
            data: BeaconAdvertisingData.altBeacon(identity, referenceRSSI: -59), address: 0xC0FF_EE00_0A17, addressType: 1)
    }

    /// A resolvable private address made by `key` (prand's top bits 01, then the specification's hash).
    static func rotatingAddress(_ key: IdentityResolvingKey, random: UInt32) -> UInt64 {
        let prand = 0x40_0000 | (random & 0x3F_FFFF)
        return UInt64(prand) << 24 | UInt64(key.addressHash(prand: prand))
    }

    @Test("an Eddystone namespace region is entered and exited through the delegate, with the kind's region back")
    func eddystoneRegion() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        let region = BeaconRegion(beaconIdentityConstraint: try .eddystone(namespace: Self.namespace), identifier: "tags")
        try await manager.startMonitoring(for: region)
        #expect(manager.monitoredRegions == [region], "beacond's echo reads back as the Eddystone region it is")
        #expect(try world.regions().contains(Self.namespace))
        let task = Task {
            while !Task.isCancelled {
                world.send(line: Self.eddystoneLine())
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        try await until("the Eddystone region's entry") { delegate.entries == [.enter("tags", late: false)] }
        task.cancel()
        _ = await task.value
        try await until("its exit") { delegate.exits == [.exit("tags", late: false)] }
        await manager.close()
    }

    @Test("an AltBeacon and an Eddystone with telemetry are ranged with their identities")
    func rangingOtherKinds() async throws {
        let world = try await World.running(granting: "authorizedWhenInUse")
        let delegate = Recorder()
        let manager = try await LocationManager(appID: World.demo, bus: world.address, delegate: delegate)
        try await manager.startRangingBeacons(satisfying: .altBeacon(id1: Self.id1))
        try await manager.startRangingBeacons(satisfying: try .eddystone(namespace: Self.namespace))
        let task = Task {
            while !Task.isCancelled {
                world.send(line: Self.altBeaconLine())
                world.send(line: Self.eddystoneLine())
                world.send(line: Self.eddystoneLine(tlm: true))
                // An iBeacon with the AltBeacon's numbers: ranged for neither constraint.
                world.send(line: World.iBeaconLine(uuid: Self.id1, major: 3, minor: 4))
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { task.cancel() }
        try await until("an AltBeacon ranged") {
            delegate.ranged.joined().contains { $0.identityConstraint == .altBeacon(id1: Self.id1, id2: 3, id3: 4) }
        }
        try await until("the Eddystone ranged with its battery and temperature") {
            delegate.ranged.joined().contains { $0.kind == .eddystone && $0.batteryMillivolts == 3_010 }
        }
        let eddystone = try #require(delegate.ranged.joined().last { $0.kind == .eddystone && $0.temperature != nil })
        #expect(eddystone.instance == Self.instance && eddystone.temperature == 22.25 && eddystone.rssi < 0)
        #expect(
            !delegate.ranged.joined().contains { $0.kind == .iBeacon }, "only the kinds asked for: no iBeacon")
        #expect(manager.rangedBeaconConstraints.count == 2)
        await manager.close()
    }

    @Test("a phone known by its key is one device across address rotations: entered once, no exit at a rotation")
    func privateDeviceAcrossRotations() async throws {
        // A 4 s exit: a busy machine's late 0.2 s sleep does not exit her; 8 addresses over 4.8 s still outlast it.
        let world = try await World.running(settings: "[monitoring]\nexit_timeout = 4\n", granting: "authorizedAlways")
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        let log = EventLog(monitor)
        let alice = try BeaconIdentityCondition.privateDevice(named: "alice-phone")
        try await monitor.add(alice, identifier: "alice")
        try await until("alice determined outside") { log.states == ["alice outside"] }
        let key = try IdentityResolvingKey(parsing: World.aliceKey)
        // A new address every 0.6 s, 8 of them (a phone rotates every ~15 minutes).
        for rotation in 0..<8 {
            let address = Self.rotatingAddress(key, random: UInt32(0x1234 * (rotation + 1)))
            for _ in 0..<3 {
                world.send(line: World.reportLine(data: BeaconAdvertisingData.phone(txPowerLevel: 8), address: address, addressType: 1))
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        #expect(log.states == ["alice outside", "alice inside"], "one entry across 8 addresses: \(log.states)")
        #expect(log.events.last?.condition == alice)
        // Silence exits her: the exit above could have come.
        try await until("alice's exit once her phone is silent") {
            log.states == ["alice outside", "alice inside", "alice outside"]
        }
        await monitor.close()
    }

    @Test("beaconctl client ranges an Eddystone namespace and monitors a phone by its device name")
    func beaconctlClientNamesEveryKind() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let sender = Task {
            let key = try IdentityResolvingKey(parsing: World.aliceKey)
            var rotation: UInt32 = 1
            while !Task.isCancelled {
                world.send(line: Self.eddystoneLine())
                world.send(line: Self.eddystoneLine(tlm: true))
                world.send(
                    line: World.reportLine(
                        data: BeaconAdvertisingData.phone(txPowerLevel: 8),
                        address: Self.rotatingAddress(key, random: 0x777 * rotation), addressType: 1))
                rotation += 1
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { sender.cancel() }
        let ranging = try world.start(
            "beaconctl", ["--bus", world.address, "client", "--app", World.demo, "range", "eddystone:\(Self.namespace)", "--count", "2"])
        #expect(try await ranging.finish() == 0, "\(ranging.output)")
        #expect(ranging.output.contains("eddystone:\(Self.namespace):\(Self.instance)"), "\(ranging.output)")
        let monitoring = try world.start(
            "beaconctl", ["--bus", world.address, "client", "--app", World.demo, "monitor", "device:alice-phone", "--count", "1"])
        #expect(try await monitoring.finish() == 0, "\(monitoring.output)")
        // Her phone is heard before the region starts: its first state is inside.
        #expect(monitoring.output.contains("state=inside region=device:alice-phone"), "\(monitoring.output)")
    }
}
