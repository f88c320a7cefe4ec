import BeaconKit
import Fleet
import Foundation
import Testing

@Suite("ESPresense ids and readings for every kind")
struct KindsFleetTests {
    static let id1 = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
    static let eddystone = BeaconIdentity.eddystone(
        namespace: EddystoneNamespace(hex: "edd1ebeac04e5defa017")!, instance: EddystoneInstance(hex: "0123456789ab")!)
    static let key = try! IdentityResolvingKey(parsing: "ec0234a357c8ad05341010a60a397d9b")

    @Test func idsAsESPresenseWritesThem() {
        #expect(
            ESPresense.deviceID(BeaconIdentity(kind: .altBeacon, uuid: Self.id1, major: 1, minor: 2))
                == "altBeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6-1-2")
        // ESPresense prints the namespace's fifth byte twice (BleFingerprint.cpp): 22 digits, so ids match its nodes'.
        #expect(ESPresense.deviceID(Self.eddystone) == "eddy:edd1ebeac0c04e5defa017-0123456789ab")
        #expect(ESPresense.deviceID(.privateDevice(fingerprint: Self.key.fingerprint), key: Self.key) == "irk:ec0234a357c8ad05341010a60a397d9b")
    }

    @Test func idsReadBack() {
        let kinds: [BeaconIdentity] = [
            BeaconIdentity(uuid: Self.id1, major: 1, minor: 2), BeaconIdentity(kind: .altBeacon, uuid: Self.id1, major: 65535, minor: 0),
            Self.eddystone,
        ]
        for identity in kinds { #expect(ESPresense.identity(fromDeviceID: ESPresense.deviceID(identity)) == identity) }
        #expect(ESPresense.identity(fromDeviceID: "EDDY:EDD1EBEAC04E5DEFA017-0123456789AB") == Self.eddystone, "20 digits, any case")
        #expect(ESPresense.identity(fromDeviceID: "irk:EC0234A357C8AD05341010A60A397D9B") == .privateDevice(fingerprint: Self.key.fingerprint))
        for bad in [
            "eddy:edd1ebeac0d04e5defa017-0123456789ab", "eddy:edd1ebeac04e5defa017", "eddy:edd1ebeac04e5defa017-0123",
            "irk:ec0234a357c8ad05341010a60a397d", "irk:m305CqYQEDQFrchXozQC7A==", "altBeacon:2f234454-1-2", "sd:feaa",
        ] {
            #expect(ESPresense.identity(fromDeviceID: bad) == nil, "\(bad)")
        }
    }

    static func observation(_ identity: BeaconIdentity, at seconds: Double) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: identity, measuredPower: -59), rssi: -65, address: BluetoothAddress(rawValue: 0x4000_0000_0001),
            addressType: 1, timestamp: Timestamp(secondsSinceEpoch: 1_000 + seconds))
    }

    @Test func onlyTheAdministratorsDevicesArePublished() throws {
        let appsOwn = try IdentityResolvingKey(parsing: "00112233445566778899aabbccddeeff")
        var publisher = ReadingPublisher(constraints: nil, interval: .seconds(1), rssiOffset: 0)
        publisher.publishedKeys = [Self.key.fingerprint: Self.key]
        let published = publisher.observe(Self.observation(.privateDevice(fingerprint: Self.key.fingerprint), at: 0))
        #expect(published?.id == "irk:ec0234a357c8ad05341010a60a397d9b")
        #expect(publisher.observe(Self.observation(.privateDevice(fingerprint: appsOwn.fingerprint), at: 0)) == nil)
        #expect(publisher.observe(Self.observation(Self.eddystone, at: 0))?.id == "eddy:edd1ebeac0c04e5defa017-0123456789ab")
    }
}
