import BeaconKit
import Foundation
import Testing

/// The pipeline is the path every advertisement takes in the daemon and in replay; these tests
/// drive it with real HCI bytes and explicit times.
@Suite("BeaconPipeline")
struct BeaconPipelineTests {
    typealias Pipeline = BeaconPipeline<String>

    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    /// An HCI LE Advertising Report event (no H4 byte) with one iBeacon report.
    static func advert(major: UInt16, minor: UInt16, rssi: Int8, address: UInt8 = 1) -> [UInt8] {
        let u = uuid.uuid
        let ad: [UInt8] = [
            0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
            u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
            UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5,
        ]
        return [0x3E, UInt8(12 + ad.count), 0x02, 0x01, 0x03, 0x01, address, 0, 0, 0, 0, 0xC0, UInt8(ad.count)]
            + ad + [UInt8(bitPattern: rssi)]
    }

    static func at(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_000 + seconds) }

    static func region(_ major: UInt16) -> BeaconRegion {
        BeaconRegion(identifier: "m\(major)", constraint: .matching(uuid: uuid, major: major))
    }

    static func names(_ events: [Pipeline.Event]) -> [String] {
        events.map { event in
            switch event {
            case .observation(let observation): return "seen \(observation.identity.major)"
            case .monitoring(let event): return "\(event.kind) \(event.key)"
            case .ranging(let results, _): return "ranging \(results.map { "\($0.key):\($0.beacons.count)" }.joined(separator: ","))"
            }
        }
    }

    @Test func decodesObservationsAndCounts() {
        var pipeline = Pipeline()
        var events: [Pipeline.Event] = []
        pipeline.ingest(hciEvent: Self.advert(major: 7, minor: 9, rssi: -60).span, at: Self.at(0), into: &events)
        pipeline.ingest(hciEvent: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00].span, at: Self.at(0.1), into: &events) // command complete
        pipeline.ingest(hciEvent: [0x3E, 0x30, 0x02].span, at: Self.at(0.2), into: &events) // truncated
        guard case .observation(let observation)? = events.first else {
            Issue.record("no observation: \(events)"); return
        }
        #expect(events.count == 1)
        #expect(observation.identity == BeaconIdentity(uuid: Self.uuid, major: 7, minor: 9))
        #expect(observation.rssi == -60)
        #expect(observation.frame.measuredPower == -59)
        #expect(observation.address.description == "C0:00:00:00:00:01")
        #expect(observation.timestamp == Self.at(0))
        #expect(pipeline.counters.events == 3)
        #expect(pipeline.counters.advertisingEvents == 1)
        #expect(pipeline.counters.iBeacons == 1)
        #expect(pipeline.counters.malformed == 1)
    }

    @Test func observationsCanBeSilenced() {
        var pipeline = Pipeline(emitsObservations: false)
        var events: [Pipeline.Event] = []
        pipeline.ingest(hciEvent: Self.advert(major: 7, minor: 9, rssi: -60).span, at: Self.at(0), into: &events)
        #expect(events.isEmpty)
        #expect(pipeline.counters.iBeacons == 1)
    }

    /// Exits and ranging cycles come out in time order, interleaved, whatever the call pattern.
    @Test func monitoringAndRangingInterleaveInTimeOrder() throws {
        var pipeline = Pipeline(
            monitoring: try MonitoringConfiguration(exitTimeout: .milliseconds(2500)),
            emitsObservations: false)
        var events: [Pipeline.Event] = []
        pipeline.startMonitoring(Self.region(1), key: "m1", at: Self.at(0), into: &events)
        pipeline.startRanging(.matching(uuid: Self.uuid), key: "all", at: Self.at(0.25), into: &events)
        pipeline.ingest(hciEvent: Self.advert(major: 1, minor: 1, rssi: -60).span, at: Self.at(0.5), into: &events)
        pipeline.advance(to: Self.at(4), into: &events)
        // Cycles at 1.25, 2.25, 3.25 s; the exit at 0.5 + 2.5 = 3.0 s sits between the last two.
        #expect(
            Self.names(events) == [
                "didStartMonitoring m1", "didDetermineState(inside) m1", "didEnterRegion m1",
                "ranging all:1", "ranging all:1", "didDetermineState(outside) m1", "didExitRegion m1", "ranging all:1",
            ])
        let times: [Timestamp] = events.map { event in
            switch event {
            case .observation(let observation): return observation.timestamp
            case .monitoring(let event): return event.timestamp
            case .ranging(_, let at): return at
            }
        }
        #expect(times == times.sorted())
    }

    /// Advancing in many small steps or one large one gives the same events (replay speed does not matter).
    @Test func advanceGranularityDoesNotChangeEvents() throws {
        func run(step: Double) throws -> [String] {
            var pipeline = Pipeline(monitoring: try MonitoringConfiguration(exitTimeout: .seconds(3)))
            var events: [Pipeline.Event] = []
            pipeline.startMonitoring(Self.region(2), key: "m2", at: Self.at(0), into: &events)
            pipeline.startRanging(.matching(uuid: Self.uuid, major: 2), key: "r2", at: Self.at(0), into: &events)
            for second in [0.2, 0.9, 1.4, 6.0, 6.5] {
                pipeline.ingest(hciEvent: Self.advert(major: 2, minor: 5, rssi: -70).span, at: Self.at(second), into: &events)
            }
            var time = 6.5
            while time < 20 {
                time += step
                pipeline.advance(to: Self.at(time), into: &events)
            }
            return Self.names(events)
        }
        let fine = try run(step: 0.01)
        #expect(fine == (try run(step: 13.5)))
        #expect(fine == (try run(step: 1)))
        #expect(fine.filter { $0.hasPrefix("didExitRegion") }.count == 2)
    }

    @Test func timeNeverRunsBackwards() throws {
        var pipeline = Pipeline(monitoring: try MonitoringConfiguration(exitTimeout: .seconds(2)))
        var events: [Pipeline.Event] = []
        pipeline.startMonitoring(Self.region(3), key: "m3", at: Self.at(0), into: &events)
        pipeline.ingest(hciEvent: Self.advert(major: 3, minor: 1, rssi: -60).span, at: Self.at(5), into: &events)
        events.removeAll()
        // A capture with a clock step backwards: the sighting still counts, nothing is undone.
        pipeline.ingest(hciEvent: Self.advert(major: 3, minor: 1, rssi: -60).span, at: Self.at(1), into: &events)
        #expect(pipeline.now == Self.at(5))
        #expect(!Self.names(events).contains { $0.hasPrefix("didExitRegion") })
        #expect(pipeline.monitor.state(of: "m3") == .inside)
    }

    @Test func nextDeadlineIsTheEarlierOfExitAndRangingCycle() throws {
        var pipeline = Pipeline(monitoring: try MonitoringConfiguration(exitTimeout: .seconds(30)))
        var events: [Pipeline.Event] = []
        #expect(pipeline.nextDeadline == nil)
        pipeline.startMonitoring(Self.region(4), key: "m4", at: Self.at(0), into: &events)
        #expect(pipeline.nextDeadline == Self.at(30)) // unknown → outside
        pipeline.startRanging(.matching(uuid: Self.uuid), key: "r", at: Self.at(2), into: &events)
        pipeline.ingest(hciEvent: Self.advert(major: 4, minor: 1, rssi: -60).span, at: Self.at(2), into: &events)
        #expect(pipeline.nextDeadline == Self.at(3)) // first ranging cycle
        pipeline.stopRanging("r")
        #expect(pipeline.nextDeadline == Self.at(32)) // entered at 2 s: exit due at 2 + 30
    }

    @Test func linkLayerCapturesFeedTheSamePath() {
        var pipeline = Pipeline()
        var events: [Pipeline.Event] = []
        // ADV_NONCONN_IND, TxAdd random: header, length, AdvA, then the same AD bytes.
        let event = Self.advert(major: 8, minor: 8, rssi: -50)
        let ad = Array(event[13..<(event.count - 1)])
        let pdu: [UInt8] = [0x42, UInt8(6 + ad.count), 1, 2, 3, 4, 5, 6] + ad
        pipeline.ingest(linkLayerPDU: pdu.span, rssi: nil, at: Self.at(0), into: &events)
        guard case .observation(let observation)? = events.first else {
            Issue.record("no observation"); return
        }
        #expect(observation.identity.major == 8)
        #expect(observation.rssi == nil)
        #expect(observation.addressType == 1)
        #expect(pipeline.counters.iBeacons == 1)
    }

    /// Ranging reports every second while on, empty results included (Core Location's didRange).
    @Test func rangingCyclesContinueWithNoBeaconsInRange() {
        var pipeline = Pipeline()
        var events: [Pipeline.Event] = []
        pipeline.startRanging(.matching(uuid: Self.uuid), key: "r", at: Self.at(0), into: &events)
        pipeline.advance(to: Self.at(3.5), into: &events)
        #expect(Self.names(events) == ["ranging r:0", "ranging r:0", "ranging r:0"])
    }

    /// Corrupt capture timestamps at the ends of the range clamp; nothing traps.
    @Test func extremeTimestampsDoNotTrap() throws {
        var pipeline = Pipeline(monitoring: try MonitoringConfiguration(exitTimeout: .seconds(30)))
        var events: [Pipeline.Event] = []
        pipeline.startMonitoring(Self.region(5), key: "m5", at: Timestamp(microsecondsSinceEpoch: .min), into: &events)
        pipeline.startRanging(.matching(uuid: Self.uuid), key: "r", at: Timestamp(microsecondsSinceEpoch: .min), into: &events)
        for micros in [Int64.min, -1, 0, Int64.max - 1, Int64.max, Int64.max] {
            pipeline.ingest(
                hciEvent: Self.advert(major: 5, minor: 1, rssi: -60).span,
                at: Timestamp(microsecondsSinceEpoch: micros), into: &events)
        }
        pipeline.advance(to: Timestamp(microsecondsSinceEpoch: .max), into: &events)
        #expect(pipeline.counters.iBeacons == 6)
        #expect(Timestamp(microsecondsSinceEpoch: .max) + .seconds(1) == Timestamp(microsecondsSinceEpoch: .max))
        #expect(Timestamp(microsecondsSinceEpoch: .min) - .seconds(1) == Timestamp(microsecondsSinceEpoch: .min))
        #expect(Timestamp(secondsSinceEpoch: .infinity) == Timestamp(microsecondsSinceEpoch: .max))
        #expect(Timestamp(secondsSinceEpoch: .nan) == .epoch)
    }

    /// After the configured run of empty cycles ranging pauses (no unbounded repetition across a
    /// gap or a clock jump) and resumes on its old one-second beat at the next sighting.
    @Test func rangingPausesAfterEmptyCyclesAndResumesOnItsBeat() {
        var pipeline = Pipeline(emptyRangingCyclesBeforePause: 3, emitsObservations: false)
        var events: [Pipeline.Event] = []
        pipeline.startRanging(.matching(uuid: Self.uuid), key: "r", at: Self.at(0.25), into: &events)
        pipeline.advance(to: Self.at(100), into: &events)
        #expect(Self.names(events) == ["ranging r:0", "ranging r:0", "ranging r:0"])
        #expect(pipeline.nextDeadline == nil)
        events.removeAll()
        pipeline.ingest(hciEvent: Self.advert(major: 9, minor: 9, rssi: -60).span, at: Self.at(150.6), into: &events)
        #expect(pipeline.nextDeadline == Self.at(151.25))
        pipeline.advance(to: Self.at(152), into: &events)
        #expect(Self.names(events) == ["ranging r:1"])
    }
}
