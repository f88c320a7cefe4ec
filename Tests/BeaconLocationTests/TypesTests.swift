@testable import BeaconLocation
import BeacondAPI
import DBus
import Foundation
import Testing

/// The library's Core Location types and the dictionaries of beacond's D-Bus API they stand for (pure).
@Suite("BeaconLocation types and the API's dictionaries")
struct TypesTests {
    let uuid = UUID(uuidString: "e2c56db5-dffb-48d2-b060-d0f5a71096e0")!

    @Test func constraintsUseTheAPITypes() {
        #expect(
            BeaconIdentityConstraint(uuid: uuid, major: 1, minor: 65535).dictionary == [
                BeacondKey.uuid: .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"),
                BeacondKey.major: .uint16(1), BeacondKey.minor: .uint16(65535),
            ])
        #expect(BeaconIdentityConstraint(uuid: uuid).dictionary.keys.sorted() == [BeacondKey.uuid])
        #expect(BeaconIdentityConstraint(uuid: uuid, major: 7).description == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:7")
    }

    @Test func regionsLeaveBeacondsDefaultsOut() {
        var region = BeaconRegion(uuid: uuid, identifier: "lobby")
        #expect(region.dictionary == [BeacondKey.uuid: .string(uuid.uuidString), BeacondKey.identifier: .string("lobby")])
        #expect(DBusValue.vardict(region.dictionary).signature == "a{sv}")
        region.notifyOnEntry = false
        region.room = "kitchen"
        region.exitDelay = 5
        #expect(region.dictionary[BeacondKey.notifyOnEntry] == .boolean(false))
        #expect(region.dictionary[BeacondKey.notifyOnExit] == nil)
        #expect(region.dictionary[BeacondKey.room] == .string("kitchen"))
        #expect(region.dictionary[BeacondKey.exitDelay] == .double(5))
        #expect(BeaconRegion(dictionary: region.dictionary) == region, "what beacond echoes reads back the same")
    }

    @Test func beaconsAndEventsReadBeacondsDictionaries() throws {
        let beacon = try #require(
            Beacon(dictionary: [
                BeacondKey.uuid: .string(uuid.uuidString), BeacondKey.major: .uint16(1), BeacondKey.minor: .uint16(2),
                BeacondKey.rssi: .int16(-58), BeacondKey.accuracy: .double(0.92), BeacondKey.proximity: .string("near"),
                BeacondKey.timestamp: .uint64(1_700_000_000_000_000),
            ]))
        #expect(beacon.proximity == .near && beacon.rssi == -58 && beacon.accuracy == 0.92)
        #expect(beacon.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(Beacon(dictionary: [BeacondKey.uuid: .string(uuid.uuidString)]) == nil, "a beacon has a major and minor")
        let late = RegionEventInfo(dictionary: [
            BeacondEventInfoKey.late: .boolean(true), BeacondEventInfoKey.droppedBefore: .uint32(3),
        ])
        #expect(late.late && late.droppedBefore == 3)
        #expect(BeaconIdentityConstraint(dictionary: [BeacondKey.uuid: .string("not a uuid")]) == nil)
        // A minor without a major is no constraint Core Location knows: the minor is dropped, not misread.
        #expect(
            BeaconIdentityConstraint(dictionary: [BeacondKey.uuid: .string(uuid.uuidString), BeacondKey.minor: .uint16(2)])
                == BeaconIdentityConstraint(uuid: uuid))
    }

    @Test func errorsSayWhoseTheyAre() {
        let refusal = BeaconLocationError(name: BeacondErrorName.notAuthorized.rawValue, message: "grant it")
        #expect(refusal.isRefusal && refusal.beacondError == .notAuthorized && refusal.description == "grant it")
        let away = BeaconLocationError.daemonUnavailable("start it")
        #expect(!away.isRefusal && away.beacondError == nil)
        #expect(throws: BeaconLocationError.self) { try BeaconRegion(uuid: uuid, identifier: "").validate() }
    }
}

extension TypesTests {
    @Test(arguments: ["", "bad\tname", String(repeating: "x", count: 257), "bell\u{7}"])
    func identifiersBeacondWouldRefuseAreRefusedAtOnce(identifier: String) {
        let error = #expect(throws: BeaconLocationError.self) {
            try BeaconRegion(uuid: uuid, identifier: identifier).validate()
        }
        #expect(error?.beacondError == .invalidRegion)
    }
}

extension TypesTests {
    @Test func textThatIsNoConstraintIsRefusedWithTheForm() throws {
        #expect(try BeaconIdentityConstraint(uuidString: uuid.uuidString, major: 1) == BeaconIdentityConstraint(uuid: uuid, major: 1))
        let notUUID = #expect(throws: BeaconLocationError.self) { try BeaconIdentityConstraint(uuidString: "door") }
        #expect(notUUID?.message.contains("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") == true)
        #expect(throws: BeaconLocationError.self) { try BeaconIdentityConstraint(uuidString: uuid.uuidString, minor: 2) }
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300])
    func anRSSIOutOfRangeIsNoCrash(rssi: Double) throws {
        let beacon = try #require(
            Beacon(dictionary: [
                BeacondKey.uuid: .string(uuid.uuidString), BeacondKey.major: .uint16(1), BeacondKey.minor: .uint16(2),
                BeacondKey.rssi: .double(rssi),
            ]))
        #expect((-128...127).contains(beacon.rssi))
    }
}
