import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import DBus
import Foundation
import Testing

@Suite("bus face: client events as signals and Admin1.Event mirrors")
struct BusFaceTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func lobby() throws -> BeaconRegion {
        try BeaconRegion(identifier: "lobby", constraint: BeaconIdentityConstraint(uuid: uuid, major: 1))
    }

    @Test("a region event: the region's dictionary, then the event's; its mirror names the region")
    func regionEvent() throws {
        let region = try Self.lobby()
        let info = EventInfo(at: Timestamp(microsecondsSinceEpoch: 42), late: true, droppedBefore: 3)
        let (member, arguments) = BusFace.signal(.didEnterRegion(region, info))
        #expect(member == BeacondMember.didEnterRegion)
        #expect(arguments == [BeaconDictionaries.dictionary(region), BusFace.dictionary(info)])
        #expect(
            BusFace.dictionary(info)
                == .vardict([
                    BeacondEventInfoKey.timestamp: .uint64(42), BeacondEventInfoKey.late: .boolean(true),
                    BeacondEventInfoKey.droppedBefore: .uint32(3),
                ]))
        // Nothing dropped: no DroppedBefore key at all.
        #expect(
            BusFace.dictionary(EventInfo(at: Timestamp(microsecondsSinceEpoch: 42)))
                == .vardict([
                    BeacondEventInfoKey.timestamp: .uint64(42), BeacondEventInfoKey.late: .boolean(false),
                ]))
        let (kind, data) = BusFace.mirror(.didEnterRegion(region, info))
        #expect(kind == BeacondEventKind.didEnterRegion)
        #expect(data == [BeacondEventKey.region: BeaconDictionaries.dictionary(region)])
    }

    @Test("a state, a failure and an authorization change carry what Admin1.Event's data promises")
    func otherEvents() throws {
        let region = try Self.lobby()
        let info = EventInfo(at: Timestamp(microsecondsSinceEpoch: 7))
        #expect(
            BusFace.signal(.didDetermineState(.inside, region, info)).arguments
                == [.string("inside"), BeaconDictionaries.dictionary(region), BusFace.dictionary(info)])
        #expect(BusFace.mirror(.didDetermineState(.inside, region, info)).data[BeacondEventKey.state] == .string("inside"))
        let error = BeacondError(.regionReplaced, "replaced")
        #expect(
            BusFace.signal(.monitoringDidFail(region, error)).arguments
                == [BeaconDictionaries.dictionary(region), .string(BeacondErrorName.regionReplaced.rawValue), .string("replaced")])
        #expect(BusFace.mirror(.monitoringDidFail(region, error)).data[BeacondEventKey.message] == .string("replaced"))
        #expect(BusFace.signal(.authorizationChanged(.authorizedAlways)) == (BeacondMember.authorizationChanged, [.string("authorizedAlways")]))
        #expect(BusFace.mirror(.authorizationChanged(.denied)).data == [BeacondEventKey.status: .string("denied")])
    }

    @Test("a ranged beacon has Room, Receivers and Receiver only with rooms")
    func rangedBeacon() throws {
        let beacon = RangedBeacon(
            identity: BeaconIdentity(uuid: Self.uuid, major: 1, minor: 2), rssi: -60, accuracy: 1.5, proximity: .near,
            measuredPower: -59, timestamp: Timestamp(microsecondsSinceEpoch: 1), receiver: "hall")
        let plain = BusFace.dictionary(RangedBeaconReport(beacon: beacon, room: nil, receivers: [:]))
        #expect(plain == BeaconDictionaries.dictionary(beacon))
        let roomed = BusFace.dictionary(RangedBeaconReport(beacon: beacon, room: "kitchen", receivers: ["hall": 2.5]))
        guard case .dictionary(_, _, let entries) = roomed else { Issue.record("not a dictionary"); return }
        let keys = entries.compactMap { entry -> String? in if case .string(let key) = entry.key { return key } else { return nil } }
        #expect(keys.suffix(3) == [BeacondKey.room, BeacondKey.receivers, BeacondKey.receiver])
        // With a floor plan: a Position a{sv}, metres to the centimetre.
        let placed = BusFace.dictionary(
            RangedBeaconReport(
                beacon: beacon, room: "kitchen", receivers: [:],
                position: Position(x: 2.123, y: 4.5, z: 1, floor: "ground", accuracy: 1.777, fixes: 4)))
        let position = try #require(placed.vardictEntries?[BeacondKey.position]?.unwrapped.vardictEntries)
        #expect(position[BeacondPositionKey.x] == .double(2.12))
        #expect(position[BeacondPositionKey.accuracy] == .double(1.78))
        #expect(position[BeacondPositionKey.floor] == .string("ground"))
        #expect(position[BeacondPositionKey.fixes] == .uint32(4))
        #expect(position.count == 6)
    }

    @Test("a start error's exit status: 78 (EX_CONFIG) for the configuration, 1 otherwise")
    func exitStatus() {
        #expect(DaemonStartError.configuration("bad").exitStatus == 78)
        #expect(DaemonStartError.state("locked").exitStatus == 1)
        #expect(DaemonStartError.bus("no bus").exitStatus == 1)
        #expect(DaemonStartError.bus("no bus").description == "no bus")
    }
}
