import BeaconKit
import Foundation
import Testing

@Suite("AltBeacon and Eddystone frames")
struct BeaconKindParsingTests {
    static let id1 = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
    static let altBeacon = BeaconIdentity(kind: .altBeacon, uuid: id1, major: 1, minor: 2)
    static let namespace = EddystoneNamespace(hex: "edd1ebeac04e5defa017")!
    static let instance = EddystoneInstance(hex: "0123456789ab")!

    @Test func altBeaconFromAnyCompany() {
        for company: UInt16 in [0x0118, 0xFFFF, 0x004C] {
            let data = BeaconAdvertisingData.altBeacon(Self.altBeacon, referenceRSSI: -61, company: company)
            let frame = BeaconFrameParser.beacon(advertisingData: data.span)
            #expect(frame == BeaconFrame(identity: Self.altBeacon, measuredPower: -61), "company \(company)")
        }
    }

    @Test func altBeaconByTheSpecificationsBytes() {
        // AltBeacon specification's example layout: length 1B, type FF, MFG ID, BEAC, 20 bytes id, ref RSSI, reserved.
        let bytes: [UInt8] =
            [0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + Self.id1.byteArray + [0x00, 0x01, 0x00, 0x02, 0xC5, 0x00]
        let frame = BeaconFrameParser.beacon(advertisingData: bytes.span)
        #expect(frame?.identity == Self.altBeacon)
        #expect(frame?.measuredPower == -59)
        #expect(frame?.identity.description == "altbeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1:2")
    }

    @Test func shortOrWrongCodeIsNoAltBeacon() {
        var data = BeaconAdvertisingData.altBeacon(Self.altBeacon, referenceRSSI: -61, flags: false)
        data[5] = 0xAD // beacon code BEAD
        #expect(BeaconFrameParser.beacon(advertisingData: data.span) == nil)
        // 25 bytes of manufacturer data: the reserved byte is missing.
        let short = BeaconAdvertisingData.structure(type: 0xFF, [0x18, 0x01, 0xBE, 0xAC] + Self.id1.byteArray + [0, 1, 0, 2, 0xC5])
        #expect(BeaconFrameParser.beacon(advertisingData: short.span) == nil)
    }

    @Test func eddystoneUIDWithAndWithoutReservedBytes() {
        let identity = BeaconIdentity.eddystone(namespace: Self.namespace, instance: Self.instance)
        let data = BeaconAdvertisingData.eddystoneUID(identity, txPowerAtZero: -18)
        let frame = BeaconFrameParser.beacon(advertisingData: data.span)
        #expect(frame?.identity == identity)
        // Power at 0 m − 41 dB is the power at 1 m.
        #expect(frame?.measuredPower == -59)
        #expect(identity.description == "eddystone:edd1ebeac04e5defa017:0123456789ab")
        // Without the two reserved bytes (20 bytes of service data, as some beacons send).
        let trimmed = BeaconAdvertisingData.structure(
            type: 0x16, [0xAA, 0xFE, 0x00, 0xEE] + Self.namespace.bytes + Self.instance.bytes)
        #expect(BeaconFrameParser.beacon(advertisingData: trimmed.span)?.identity == identity)
        // One byte short of an instance.
        let short = BeaconAdvertisingData.structure(type: 0x16, [0xAA, 0xFE, 0x00, 0xEE] + Self.namespace.bytes + [1, 2, 3, 4, 5])
        #expect(BeaconFrameParser.beacon(advertisingData: short.span) == nil)
    }

    @Test func eddystoneTelemetry() {
        let telemetry = EddystoneTelemetry(batteryMillivolts: 3012, temperature: 23.5, advertisingCount: 1234, uptimeTenths: 98765)
        let content = BeaconFrameParser.parse(advertisingData: BeaconAdvertisingData.eddystoneTLM(telemetry).span)
        #expect(content.beacon == nil)
        #expect(content.telemetry == telemetry)
        // 0 mV and 0x8000 mean "not supported".
        let unknown = EddystoneTelemetry(batteryMillivolts: nil, temperature: nil, advertisingCount: 0, uptimeTenths: 0)
        #expect(BeaconFrameParser.parse(advertisingData: BeaconAdvertisingData.eddystoneTLM(unknown).span).telemetry == unknown)
        // A negative temperature in 8.8 fixed point: 0xFF80 is −0.5 °C.
        let bytes = BeaconAdvertisingData.structure(type: 0x16, [0xAA, 0xFE, 0x20, 0x00, 0x0B, 0xB8, 0xFF, 0x80] + [UInt8](repeating: 0, count: 8))
        #expect(BeaconFrameParser.parse(advertisingData: bytes.span).telemetry?.temperature == -0.5)
        // Encrypted TLM (version 1) is not read.
        var encrypted = BeaconAdvertisingData.eddystoneTLM(telemetry, flags: false)
        encrypted[9] = 0x01
        #expect(BeaconFrameParser.parse(advertisingData: encrypted.span).telemetry == nil)
    }

    @Test func txPowerLevel() {
        #expect(BeaconFrameParser.parse(advertisingData: BeaconAdvertisingData.phone(txPowerLevel: -12).span).txPowerLevel == -12)
        #expect(BeaconFrameParser.parse(advertisingData: BeaconAdvertisingData.phone(txPowerLevel: nil).span).txPowerLevel == nil)
    }

    @Test func iBeaconIsUnchanged() {
        let identity = BeaconIdentity(uuid: Self.id1, major: 1, minor: 2)
        let data = BeaconAdvertisingData.iBeacon(identity, measuredPower: -59)
        #expect(BeaconFrameParser.beacon(advertisingData: data.span) == IBeaconParser.parse(advertisingData: data.span))
        #expect(BeaconFrameParser.beacon(advertisingData: data.span)?.identity == identity)
    }
}

@Suite("Constraints of every kind")
struct BeaconKindConstraintTests {
    static let uuid = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!

    @Test func textForms() throws {
        #expect(try BeaconIdentityConstraint(parsing: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1").kind == .iBeacon)
        #expect(try BeaconIdentityConstraint(parsing: "ibeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1").kind == .iBeacon)
        let alt = try BeaconIdentityConstraint(parsing: "AltBeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1:2")
        #expect(alt.kind == .altBeacon && alt.major == 1 && alt.minor == 2)
        #expect(alt.description == "altbeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1:2")
        let namespace = try BeaconIdentityConstraint(parsing: "eddystone:EDD1EBEAC04E5DEFA017")
        #expect(namespace.eddystoneInstance == nil)
        #expect(namespace.description == "eddystone:edd1ebeac04e5defa017")
        let instance = try BeaconIdentityConstraint(parsing: "eddystone:edd1ebeac04e5defa017:0123456789AB")
        #expect(instance.description == "eddystone:edd1ebeac04e5defa017:0123456789ab")
        #expect(throws: BeaconIdentityConstraint.Invalid.malformedEddystone("eddystone:edd1")) {
            try BeaconIdentityConstraint(parsing: "eddystone:edd1")
        }
        let device = try BeaconIdentityConstraint(parsing: "device:alice-phone")
        #expect(device.kind == .privateDevice && device.deviceName == "alice-phone")
        #expect(device.description == "device:alice-phone")
        #expect(throws: BeaconIdentityConstraint.Invalid.malformedDevice("device:Alice Phone")) {
            try BeaconIdentityConstraint(parsing: "device:Alice Phone")
        }
    }

    @Test func kindsNeverMatchEachOther() throws {
        let iBeacon = BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2)
        let altBeacon = BeaconIdentity(kind: .altBeacon, uuid: Self.uuid, major: 1, minor: 2)
        #expect(iBeacon != altBeacon)
        #expect(BeaconIdentityConstraint.matching(uuid: Self.uuid).matches(iBeacon))
        #expect(!BeaconIdentityConstraint.matching(uuid: Self.uuid).matches(altBeacon))
        var index = RegionIndex<String>()
        index.insert(.matching(uuid: Self.uuid), for: "ibeacon-uuid")
        index.insert(try BeaconIdentityConstraint(kind: .altBeacon, uuid: Self.uuid, major: 1), for: "alt-major")
        index.insert(BeaconIdentityConstraint(altBeacon), for: "alt-exact")
        index.insert(BeaconIdentityConstraint(iBeacon), for: "ibeacon-exact")
        #expect(Self.matches(index, iBeacon) == ["ibeacon-exact", "ibeacon-uuid"])
        #expect(Self.matches(index, altBeacon) == ["alt-exact", "alt-major"])
    }

    @Test func eddystoneNamespaceMatchesEveryInstance() {
        let namespace = EddystoneNamespace(hex: "edd1ebeac04e5defa017")!
        let first = BeaconIdentity.eddystone(namespace: namespace, instance: EddystoneInstance(hex: "000000000001")!)
        let second = BeaconIdentity.eddystone(namespace: namespace, instance: EddystoneInstance(hex: "ffffffffffff")!)
        let other = BeaconIdentity.eddystone(
            namespace: EddystoneNamespace(hex: "edd1ebeac04e5defa018")!, instance: EddystoneInstance(hex: "000000000001")!)
        var index = RegionIndex<String>()
        index.insert(.eddystone(namespace: namespace), for: "namespace")
        index.insert(BeaconIdentityConstraint(first), for: "first")
        #expect(Self.matches(index, first) == ["first", "namespace"])
        #expect(Self.matches(index, second) == ["namespace"])
        #expect(Self.matches(index, other) == [])
        #expect(BeaconIdentityConstraint.eddystone(namespace: namespace).matches(second))
        #expect(!BeaconIdentityConstraint.eddystone(namespace: namespace).matches(other))
        // An iBeacon whose UUID starts with the namespace's bytes is no Eddystone beacon.
        #expect(Self.matches(index, BeaconIdentity(uuid: first.uuid, major: 0, minor: 0)) == [])
        index.remove("namespace")
        #expect(Self.matches(index, second) == [])
    }

    static func matches(_ index: RegionIndex<String>, _ identity: BeaconIdentity) -> [String] {
        var keys: [String] = []
        index.forEachMatch(of: identity) { keys.append($0) }
        #expect(index.containsMatch(for: identity) == !keys.isEmpty)
        return keys.sorted()
    }
}
