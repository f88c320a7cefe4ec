@testable import BeaconKit
import Foundation
import TestKit
import Testing

/// A fleet as it behaves (issue 22): readings of one advertisement arrive from several receivers 5–60 ms apart and
/// out of order, the first reading to arrive is not the nearest, slow tags miss advertisements, and receivers of
/// unrelated rooms go offline. Times are seconds after a fixed base.
@Suite("A fleet's timing: latency, reordering, first readings, slow tags, offline receivers elsewhere")
struct FleetTimingTests {
    typealias Kit = MonitorTestKit
    let beacon = Kit.beacon(1, 1)
    let living = ReceiverID(rawValue: 1)
    let kitchen = ReceiverID(rawValue: 2)
    let bedroom = ReceiverID(rawValue: 3)

    /// One advertisement every `interval` s from `start` for `count` advertisements, heard by each receiver with
    /// its delivery latency drawn from 5–60 ms (as ESPresense nodes over Wi-Fi deliver readings): the readings as
    /// the daemon sees them, in arrival order, stamped with arrival time.
    static func arrivals(
        receivers: [ReceiverID], interval: Double, start: Double, count: Int, latency: ClosedRange<Double>,
        seed: UInt64 = 7
    ) -> [(receiver: ReceiverID, time: Double)] {
        var random = SplitMix64(state: seed)
        var readings: [(receiver: ReceiverID, time: Double)] = []
        for n in 0..<count {
            let sent = start + Double(n) * interval
            for receiver in receivers {
                let delay = latency.lowerBound + (latency.upperBound - latency.lowerBound) * Double(random.next() % 10_000) / 10_000
                readings.append((receiver, sent + delay))
            }
        }
        return readings.sorted { $0.time < $1.time }
    }

    func adaptive() throws -> MonitorTestHarness {
        MonitorTestHarness(
            try MonitoringConfiguration(
                exitTimeout: .seconds(180),
                adaptiveExit: AdaptiveExit(minimum: .seconds(2), chance: 1e-3)))
    }

    /// When the region exits after `readings` (the beacon leaves after the last advertisement), seconds after the
    /// last advertisement was sent.
    func exitDelay(_ readings: [(receiver: ReceiverID, time: Double)], lastSent: Double) throws -> Double {
        var h = try adaptive()
        h.start(try Kit.region("a", major: 1, minor: 1), at: 0)
        for reading in readings {
            h.monitor.observe(beacon, rssi: -60, by: reading.receiver, at: Kit.at(reading.time), into: &h.pending)
        }
        _ = h.take()
        h.advance(to: lastSent + 200)
        let exit = try #require(h.take().first { $0.hasSuffix("didExitRegion a") })
        return try #require(Double(exit.split(separator: " ")[0])) - lastSent
    }

    // MARK: Item 3: one advertisement heard by several receivers

    @Test("readings of one advertisement from three receivers, 5–60 ms late and reordered, are one sighting")
    func latencyIsOneAdvertisement() {
        var rhythm = SightingRhythm()
        let readings = Self.arrivals(
            receivers: [living, kitchen, bedroom], interval: 1, start: 1, count: 40,
            latency: 0.005...0.060)
        for reading in readings { rhythm.record(Int64(reading.time * 1_000_000), by: reading.receiver) }
        #expect(rhythm.gapCount == 39)
        let interval = Double(rhythm.interval ?? 0) / 1_000_000
        #expect(interval > 0.9 && interval <= 1.0, "learned \(interval) s")
    }

    @Test("a receiver never hears one advertisement twice: its two readings 30 ms apart are two advertisements")
    func sameReceiverTwiceIsTwoAdvertisements() {
        var rhythm = SightingRhythm()
        for n in 0..<20 { rhythm.record(Int64(n) * 30_000, by: .local) }
        #expect(rhythm.gapCount == 19)
        #expect(rhythm.interval == 30_000)
    }

    @Test("receivers numbered from 256 up are grouped as those below: a repeat is the next advertisement", arguments: [1, 300])
    func largeReceiverNumbers(base: UInt32) {
        var grouping = AdvertisementGrouping()
        let a = ReceiverID(rawValue: base), b = ReceiverID(rawValue: base + 63), c = ReceiverID(rawValue: base + 200)
        #expect(grouping.record(a, at: 0) == (true, nil))
        #expect(grouping.record(b, at: 10_000) == (false, nil))
        #expect(grouping.record(c, at: 20_000) == (false, nil))
        #expect(grouping.heardCurrent(c) && !grouping.heardCurrent(ReceiverID(rawValue: base + 1)))
        #expect(grouping.record(b, at: 30_000) == (true, 30_000))
        #expect(!grouping.heardCurrent(a) && !grouping.heardCurrent(c))
        #expect(grouping.record(a, at: 200_000) == (true, 170_000))
        #expect(grouping.count == 3)
    }

    @Test("exits with 5–60 ms reading latency come within one advertising interval of exits without")
    func latencyDoesNotDelayExits() throws {
        let receivers = [living, kitchen, bedroom]
        let prompt = try exitDelay(
            Self.arrivals(receivers: receivers, interval: 1, start: 1, count: 120, latency: 0...0),
            lastSent: 120)
        let late = try exitDelay(
            Self.arrivals(receivers: receivers, interval: 1, start: 1, count: 120, latency: 0.005...0.060),
            lastSent: 120)
        #expect(abs(late - prompt) <= 1, "exit \(late) s after the last advertisement with latency, \(prompt) s without")
    }

    // MARK: Item 4: the first placement, and slow tags

    /// Margin 30 %, dwell 6 s, no smoothing.
    func locator() throws -> RoomLocator<String> {
        RoomLocator(configuration: try RoomConfiguration(margin: 0.3, dwell: .seconds(6), smoothing: .zero))
    }

    @Test("a far reading arriving 10 ms before nearer ones does not place the beacon: the first advertisement's readings are collected")
    func firstAdvertisementCollected() throws {
        var rooms = try locator()
        var placements: [RoomPlacement] = []
        // Advertisement 1: the bedroom (far, 8 m: −94 dBm) arrives first, the living room (1 m) 10 ms later.
        for n in 0..<5 {
            let sent = Double(n)
            if let p = rooms.observe("tag", distance: 8, by: bedroom, in: "bedroom", at: Kit.at(sent + 0.010)) { placements.append(p) }
            if let p = rooms.observe("tag", distance: 1, by: living, in: "living", at: Kit.at(sent + 0.020)) { placements.append(p) }
        }
        #expect(placements == [.room("living")])
    }

    @Test("a slow tag (8 s) whose room misses two advertisements stays in its room, with readings 10–50 ms late")
    func slowTagMissesTwo() throws {
        var rooms = try locator()
        var changes: [RoomPlacement] = []
        for n in 0..<30 {
            let sent = Double(n) * 8
            // The living room's receiver hears it at 1 m but misses advertisements 10 and 11 (and 20, 21); the
            // kitchen's and the bedroom's hear every one at 3 m and 6 m, through the walls.
            // The first advertisement only the living room hears.
            if n > 0, let p = rooms.observe("tag", distance: 3, by: kitchen, in: "kitchen", at: Kit.at(sent + 0.010)) { changes.append(p) }
            if n > 0, let p = rooms.observe("tag", distance: 6, by: bedroom, in: "bedroom", at: Kit.at(sent + 0.030)) { changes.append(p) }
            if ![10, 11, 20, 21].contains(n),
                let p = rooms.observe("tag", distance: 1, by: living, in: "living", at: Kit.at(sent + 0.050))
            {
                changes.append(p)
            }
        }
        #expect(changes == [.room("living")])
    }

    @Test("a room that stops hearing a beacon others keep hearing loses it once its expected hearings are missed")
    func roomThatStopsHearingLosesIt() throws {
        var rooms = try locator()
        for n in 0..<10 {
            let sent = Double(n) * 8
            rooms.observe("tag", distance: 3, by: kitchen, in: "kitchen", at: Kit.at(sent + 0.030))
            rooms.observe("tag", distance: 1, by: living, in: "living", at: Kit.at(sent + 0.050))
        }
        // The living room hears nothing from advertisement 10 on: the kitchen (no margin needed) takes it.
        var movedAt: Double?
        for n in 10..<30 {
            let sent = Double(n) * 8
            if rooms.observe("tag", distance: 3, by: kitchen, in: "kitchen", at: Kit.at(sent + 0.030)) == .room("kitchen") { movedAt = sent }
        }
        let at = try #require(movedAt)
        #expect(at <= 80 + 8 * 6, "moved at \(at) s")
    }

    // MARK: Item 2: blindness scoped to the room

    func roomRegion(_ room: String) throws -> BeaconRegion {
        var region = try Kit.region(room, major: 1, minor: 1)
        region.room = room
        return region
    }

    func see(
        _ h: inout MonitorTestHarness, by receiver: ReceiverID, in receiverRoom: String, placed: SightingRoom,
        at seconds: Double
    ) {
        h.monitor.observe(beacon, rssi: -60, by: receiver, in: receiverRoom, room: placed, at: Kit.at(seconds), into: &h.pending)
    }

    /// A monitor with region @living, its beacon heard every second from 1 s to `through` by the living room's
    /// receiver and, 20 ms later, by `also` (in `alsoRoom`), placed in the living room; events taken.
    func inLiving(through: Double, also: ReceiverID?, in alsoRoom: String = "") throws -> MonitorTestHarness {
        var h = MonitorTestHarness()
        h.start(try roomRegion("living"), at: 0)
        _ = h.take()
        for second in stride(from: 1.0, through: through, by: 1) {
            see(&h, by: living, in: "living", placed: .room("living"), at: second)
            if let also { see(&h, by: also, in: alsoRoom, placed: .room("living"), at: second + 0.02) }
        }
        #expect(h.take() == ["1.0 didDetermineState(inside) living", "1.0 didEnterRegion living"])
        return h
    }

    @Test("a receiver of an unrelated room going offline does not hold a room region's exit")
    func unrelatedOfflineReceiverDoesNotHold() throws {
        // In the living room, heard by the living room's and the bedroom's receivers.
        var h = try inLiving(through: 20, also: bedroom, in: "bedroom")
        // The bedroom's receiver goes offline; the beacon walks into the kitchen, placed there by online receivers.
        h.receiverOffline(bedroom, at: 21)
        #expect(h.take().isEmpty)
        for second in stride(from: 22.0, through: 80, by: 1) {
            see(&h, by: kitchen, in: "kitchen", placed: .room("kitchen"), at: second)
            see(&h, by: living, in: "living", placed: .room("kitchen"), at: second + 0.02)
        }
        // Left 30 s after the last sighting placed in the living room (20.02 s), not held for the bedroom.
        #expect(h.take() == ["50.02 didDetermineState(outside) living", "50.02 didExitRegion living"])
    }

    @Test("an offline receiver of an unrelated room never blinds a room region, even with nothing heard since")
    func unrelatedOfflineReceiverAtDeadline() throws {
        var h = try inLiving(through: 10, also: bedroom, in: "bedroom")
        h.receiverOffline(bedroom, at: 11)
        #expect(h.take().isEmpty)
        // Nothing is heard any more: the living room's receiver, online, hears nothing, so the beacon is gone.
        h.advance(to: 100)
        #expect(h.take() == ["40.02 didDetermineState(outside) living", "40.02 didExitRegion living"])
    }

    @Test("the region's own room's receiver going offline still makes it unknown and waits, as before")
    func ownRoomReceiverStillHolds() throws {
        var h = try inLiving(through: 10, also: nil)
        h.receiverOffline(living, at: 11)
        #expect(h.take() == ["11.0 didDetermineState(unknown) living"])
        h.advance(to: 1000)
        #expect(h.take().isEmpty)
    }

    @Test("placed elsewhere after its own room's receiver went offline: the region leaves on time")
    func placedElsewhereLeavesOnTime() throws {
        var h = try inLiving(through: 10, also: kitchen, in: "kitchen")
        // It walks into the kitchen and is placed there (the dwell passed) while the living room's receiver still
        // hears it; then that receiver goes offline. The kitchen's placement is made by an online receiver.
        for second in stride(from: 11.0, through: 20, by: 1) {
            see(&h, by: kitchen, in: "kitchen", placed: .room("kitchen"), at: second)
            see(&h, by: living, in: "living", placed: .room("kitchen"), at: second + 0.02)
        }
        h.receiverOffline(living, at: 21)
        for second in stride(from: 21.0, through: 60, by: 1) {
            see(&h, by: kitchen, in: "kitchen", placed: .room("kitchen"), at: second)
        }
        #expect(h.take() == ["40.02 didDetermineState(outside) living", "40.02 didExitRegion living"])
    }
}
