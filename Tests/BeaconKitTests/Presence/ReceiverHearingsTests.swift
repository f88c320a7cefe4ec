import BeaconKit
import Testing

@Suite("receivers hearing each other")
struct ReceiverHearingsTests {
    let start = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)

    @Test("the latest reading of each pair is kept, bounded, and forgotten with age")
    func keptBoundedForgotten() {
        var hearings = ReceiverHearings(capacity: 3)
        hearings.record("r2", rssi: -70, measuredPower: -59, by: "r1", at: start)
        hearings.record("r2", rssi: -72, measuredPower: -59, by: "r1", at: start + .seconds(1))
        hearings.record("r1", rssi: -71, measuredPower: -60, by: "r2", at: start)
        hearings.record("r1", rssi: -71, measuredPower: -60, by: "r1", at: start) // itself: nothing
        hearings.record("r3", rssi: .nan, measuredPower: -59, by: "r1", at: start) // no number: nothing
        #expect(hearings.count == 2)
        #expect(hearings.latest["r1"]?["r2"]?.rssi == -72)
        hearings.record("r3", rssi: -80, measuredPower: -59, by: "r1", at: start + .seconds(2))
        hearings.record("r4", rssi: -80, measuredPower: -59, by: "r1", at: start + .seconds(2)) // full: not kept
        #expect(hearings.count == 3 && hearings.latest["r1"]?["r4"] == nil)
        // A pair already kept is still updated when full.
        hearings.record("r1", rssi: -65, measuredPower: -60, by: "r2", at: start + .seconds(3))
        #expect(hearings.latest["r2"]?["r1"]?.rssi == -65)
        #expect(hearings.readings(since: start + .seconds(2)).map { "\($0.listener)>\($0.advertiser)" } == ["r1>r3", "r2>r1"])
        hearings.forget(before: start + .seconds(2))
        #expect(hearings.count == 2 && hearings.latest["r1"]?["r2"] == nil)
    }

    @Test("rooms keep them between plan receivers only, with a typical measured power when the node gives none, and forget them")
    func presenceKeepsThem() {
        let plan = FloorPlan(
            floors: [FloorPlan.Floor(id: "flat")],
            rooms: [FloorPlan.Room(id: "all", floor: "flat", points: [.init(x: 0, y: 0), .init(x: 9, y: 0), .init(x: 9, y: 9), .init(x: 0, y: 9)])],
            receivers: [
                FloorPlan.Receiver(id: "kitchen", floor: "flat", x: 1, y: 1, z: 2), FloorPlan.Receiver(id: "office", floor: "flat", x: 8, y: 8, z: 2),
            ])
        // Without a plan nothing says how far apart they are: not kept.
        var planless = RoomPresence(localRoom: "hall")
        planless.receiverHeard("office", rssi: -75, measuredPower: nil, by: "kitchen", at: start)
        #expect(planless.hearings.count == 0)
        var presence = RoomPresence(localRoom: "hall", floorPlan: plan)
        presence.receiverHeard("office", rssi: -75, measuredPower: nil, by: "kitchen", at: start)
        // Nodes anyone on the broker could invent take no place from the real ones.
        for index in 0..<5000 { presence.receiverHeard("ghost\(index)", rssi: -75, measuredPower: nil, by: "kitchen", at: start) }
        presence.receiverHeard("office", rssi: -75, measuredPower: nil, by: "ghost", at: start)
        #expect(presence.hearings.count == 1)
        #expect(presence.hearings.latest["kitchen"]?["office"]?.measuredPower == -59)
        #expect(presence.locator.distances(of: BeaconIdentity.privateDevice(fingerprint: .init()), at: start).isEmpty)
        presence.forget(notHeardFor: .seconds(60), at: start + .seconds(61))
        #expect(presence.hearings.count == 0)
    }
}
