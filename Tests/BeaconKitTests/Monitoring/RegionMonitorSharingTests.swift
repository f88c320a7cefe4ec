@testable import BeaconKit
import Testing

@Suite("RegionMonitor with many regions")
struct RegionMonitorSharingTests {
    typealias Kit = MonitorTestKit

    @Test("UUID, UUID+major and full regions share one beacon; siblings keep only the wider ones inside")
    func sharedBeacon() throws {
        var h = MonitorTestHarness()
        h.start(try Kit.region("uuid"), at: 0)
        h.start(try Kit.region("major", major: 1), at: 0)
        h.start(try Kit.region("full", major: 1, minor: 1), at: 0)
        h.start(try Kit.region("otherMinor", major: 1, minor: 2), at: 0)
        h.start(try Kit.region("otherMajor", major: 2), at: 0)
        h.start(try Kit.region("otherUUID", Kit.uuidB), at: 0)
        _ = h.take()
        h.see(Kit.beacon(1, 1), at: 1)
        #expect(
            h.take() == [
                "1.0 didDetermineState(inside) uuid", "1.0 didEnterRegion uuid",
                "1.0 didDetermineState(inside) major", "1.0 didEnterRegion major",
                "1.0 didDetermineState(inside) full", "1.0 didEnterRegion full",
            ])
        // A sibling (same UUID and major, other minor) is heard from now on; (1, 1) is gone.
        for second in stride(from: 10.0, through: 60, by: 10) { h.see(Kit.beacon(1, 3), at: second) }
        #expect(
            h.take() == [
                "30.0 didDetermineState(outside) otherMinor", "30.0 didDetermineState(outside) otherMajor",
                "30.0 didDetermineState(outside) otherUUID",
                "31.0 didDetermineState(outside) full", "31.0 didExitRegion full",
            ])
        #expect(h.monitor.state(of: "uuid") == .inside)
        #expect(h.monitor.state(of: "major") == .inside)
    }

    @Test("10,000 regions: a few sightings enter exactly the matching regions and exit them on time")
    func tenThousandRegions() throws {
        var monitor = RegionMonitor<Int>()
        var events: [MonitoringEvent<Int>] = []
        // 9,900 full-identity regions (major 0-98, minor 0-99), 99 per-major regions, one UUID-wide region.
        for key in 0..<9_900 {
            let region = try Kit.region("full \(key)", major: UInt16(key / 100), minor: UInt16(key % 100))
            monitor.startMonitoring(region, for: key, at: Kit.at(0), into: &events)
        }
        for major in 0..<99 {
            monitor.startMonitoring(
                try Kit.region("major \(major)", major: UInt16(major)), for: 10_000 + major,
                at: Kit.at(0), into: &events)
        }
        monitor.startMonitoring(try Kit.region("all"), for: 20_000, at: Kit.at(0), into: &events)
        #expect(monitor.count == 10_000)
        #expect(events.count == 10_000)
        events.removeAll()

        let seen: [(major: UInt16, minor: UInt16, second: Double)] = [(7, 42, 5), (98, 99, 6), (7, 43, 7), (3, 0, 20)]
        for sighting in seen {
            monitor.observe(Kit.sighting(Kit.beacon(sighting.major, sighting.minor), at: sighting.second), into: &events)
        }
        let entered = events.filter { $0.kind == .didEnterRegion }.map(\.key)
        #expect(entered == [742, 10_007, 20_000, 9_899, 10_098, 743, 300, 10_003])
        #expect(monitor.nextDeadline == Kit.at(30))

        monitor.advance(to: Kit.at(1_000), into: &events)
        let outside = events.filter { $0.kind == .didDetermineState(.outside) }
        #expect(outside.count == 10_000)
        #expect(outside.filter { $0.timestamp == Kit.at(30) }.count == 10_000 - 8)
        let exits = events.filter { $0.kind == .didExitRegion }.map { "\(MonitorTestKit.seconds($0.timestamp)) \($0.key)" }
        #expect(
            exits == [
                "35.0 742", "36.0 9899", "36.0 10098", "37.0 743", "37.0 10007",
                "50.0 300", "50.0 10003", "50.0 20000",
            ])
        #expect(monitor.nextDeadline == nil)
    }
}

@Suite("RegionMonitor deadline queue")
struct RegionMonitorQueueTests {
    @Test("pending deadlines are one per waiting region: refreshes move them, restored ones join the list when seen")
    func queueStaysSmall() throws {
        var monitor = RegionMonitor<Int>()
        var events: [MonitoringEvent<Int>] = []
        for key in 0..<200 {
            let region = try MonitorTestKit.region("r\(key)", major: UInt16(key % 10))
            if key.isMultiple(of: 2) {
                monitor.startMonitoring(region, for: key, at: MonitorTestKit.at(0), into: &events)
            } else {
                monitor.restore(
                    region, for: key, state: .inside, lastSeen: MonitorTestKit.at(Double(-key) / 10),
                    at: MonitorTestKit.at(0))
            }
        }
        #expect(monitor.queuedDeadlineCount == 200)
        #expect(monitor.nextDeadline == MonitorTestKit.at(-19.9 + 30))
        // 3,000 sightings over 75 s, each refreshing 20 regions: 60,000 refreshes, several exit timeouts long.
        for step in 0..<3_000 {
            let beacon = MonitorTestKit.beacon(UInt16(step % 10), 1)
            monitor.observe(MonitorTestKit.sighting(beacon, at: Double(step) / 40), into: &events)
        }
        #expect(monitor.queuedDeadlineCount == 200)
        #expect(monitor.nextDeadline == MonitorTestKit.at(74.75 + 30))
        monitor.advance(to: MonitorTestKit.at(1_000), into: &events)
        #expect(monitor.queuedDeadlineCount == 0)
        #expect(events.filter { $0.kind == .didExitRegion }.count == 200)
        #expect(events.filter { $0.kind == .didEnterRegion }.count == 100)
    }
}
