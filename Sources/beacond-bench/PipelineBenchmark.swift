import TestKit
import ArgumentParser
import BeaconKit
import Foundation

/// `beacond-bench pipeline`: the daemon's whole per-advertisement path on one core — HCI decode,
/// iBeacon parse, matching against `--regions` monitored regions, ranging filter update,
/// monitoring state machine — measured as observations per second; then the once-per-second
/// ranging cycle over the whole tracked table, timed alone; then what both cost together at
/// `--rate` adverts per second (default 2,700, the most legacy adverts one controller can
/// deliver), as a share of one core.
/// Target (docs/performance.md): ≥ 1 million observations/s.
struct PipelineBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Full pipeline throughput: decode + match + ranging + monitoring (run with -c release).")

    @Option(help: "HCI events per round (one iBeacon report each).")
    var events = 1_000_000

    @Option(help: "Distinct beacons advertising.")
    var beacons = 10_000

    @Option(help: "Monitored regions.")
    var regions = 10_000

    @Option(help: "Adverts per second of capture time.")
    var rate = 2_700

    @Option(help: "Time budget per measurement, in seconds (at least 5 rounds run regardless).")
    var seconds = 3.0

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Flag(help: "Adaptive exits on (exit_timeout_min 2 s, exit_timeout 180 s): every sighting updates its beacon's rhythm.")
    var adaptiveExits = false

    @Flag(help: "Rooms on (as with [mqtt]): every sighting also places its beacon with the room locator.")
    var rooms = false

    func validate() throws {
        guard events > 0, beacons > 0, regions > 0, rate > 0 else {
            throw ValidationError("--events, --beacons, --regions and --rate must be positive")
        }
        guard seconds > 0, seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        // 16 UUIDs × 65,536 majors: beyond that identities would repeat.
        guard beacons <= 16 * 65_536 else { throw ValidationError("--beacons must be at most \(16 * 65_536)") }
        guard rate <= 1_000_000 else { throw ValidationError("--rate must be at most 1,000,000 adverts per second") }
    }

    struct Result: Codable {
        var events: Int
        var beacons: Int
        var regions: Int
        var rangedConstraints: Int
        var ratePerCaptureSecond: Int
        var rounds: Int
        var observationsPerSecond: Rates
        var rangingCycleMillisecondsMedian: Double
        var trackedBeacons: Int
        var monitoringEventsPerRound: Int
        /// Ingesting `ratePerCaptureSecond` adverts plus one ranging cycle, per second of real time.
        var coreShareAtRate: Double
    }

    func run() throws {
        let stream = SyntheticAdvertStream(beacons: beacons, events: events)
        // Ranging cycles are timed separately below: here the cadence is set beyond the stream's
        // length so a round measures only the per-advertisement path.
        let monitoring =
            adaptiveExits
            ? try MonitoringConfiguration(exitTimeout: .seconds(180), adaptiveExit: AdaptiveExit(minimum: .seconds(2)))
            : .default
        var pipeline = BeaconPipeline<Int>(monitoring: monitoring, rangingInterval: .seconds(1_000_000), emitsObservations: false)
        if rooms { pipeline.presence = RoomPresence(localRoom: "bench") }
        var events: [BeaconPipeline<Int>.Event] = []
        // Regions: every beacon's full identity, and UUID+major regions on top, up to --regions.
        let start = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
        for key in 0..<regions {
            let constraint = SyntheticAdvertStream.regionConstraint(key, beacons: beacons)
            pipeline.startMonitoring(
                BeaconRegion(identifier: "r\(key)", constraint: constraint),
                key: key, at: start, into: &events)
        }
        // Ranging: each of the stream's proximity UUIDs, as an app ranging its fleet would.
        for (offset, uuid) in SyntheticAdvertStream.uuids.enumerated() {
            pipeline.ranger.startRanging(.matching(uuid: uuid), key: -1 - offset)
        }
        events.removeAll()

        let step = 1_000_000 / Int64(rate)
        var clock = start.microsecondsSinceEpoch
        var monitoringEvents = 0
        let timer = RoundTimer(budget: .milliseconds(Int(seconds * 1000)))
        let times = try timer.measure {
            monitoringEvents = 0
            let before = pipeline.counters.iBeacons
            let span = stream.bytes.span
            for index in 0..<stream.count {
                clock += step
                pipeline.ingest(
                    hciEvent: span.extracting(stream.offsets[index]..<stream.offsets[index + 1]),
                    at: Timestamp(microsecondsSinceEpoch: clock), into: &events)
                if !events.isEmpty {
                    for event in events {
                        switch event {
                        case .monitoring: monitoringEvents += 1
                        case .ranging, .observation: break
                        }
                    }
                    events.removeAll(keepingCapacity: true)
                }
            }
            // The work must have happened: every event carries exactly one iBeacon.
            guard pipeline.counters.iBeacons - before == stream.count else {
                throw ValidationError("pipeline saw \(pipeline.counters.iBeacons - before) iBeacons, expected \(stream.count)")
            }
        }

        // Ranging cycles as they run at `--rate`: one capture second of adverts (untimed), then one
        // cycle over the whole table (timed), twenty times.
        var cycleTimes: [Double] = []
        let clockNow = ContinuousClock()
        let span = stream.bytes.span
        var next = 0
        for _ in 0..<20 {
            for _ in 0..<rate {
                clock += step
                pipeline.ingest(
                    hciEvent: span.extracting(stream.offsets[next]..<stream.offsets[next + 1]),
                    at: Timestamp(microsecondsSinceEpoch: clock), into: &events)
                next = (next + 1) % stream.count
            }
            events.removeAll(keepingCapacity: true)
            let begin = clockNow.now
            let results = pipeline.ranger.rangeBeacons(at: Timestamp(microsecondsSinceEpoch: clock))
            cycleTimes.append((clockNow.now - begin).seconds)
            withExtendedLifetime(results) {}
        }
        let rates = times.rates(perRound: stream.count)
        let cycleSeconds = RoundTimes(seconds: cycleTimes).median
        let result = Result(
            events: stream.count, beacons: beacons, regions: regions,
            rangedConstraints: SyntheticAdvertStream.uuids.count, ratePerCaptureSecond: rate,
            rounds: times.rounds, observationsPerSecond: rates,
            rangingCycleMillisecondsMedian: cycleSeconds * 1000,
            trackedBeacons: pipeline.ranger.trackedBeaconCount, monitoringEventsPerRound: monitoringEvents,
            coreShareAtRate: Double(rate) / rates.median + cycleSeconds)
        if json {
            try JSONOutput.print(result)
        } else {
            print(
                """
                full pipeline: \(result.events) HCI events per round, \(beacons) beacons, \(regions) monitored regions, \
                \(result.rangedConstraints) ranged UUIDs
                  decode + match + ranging update + monitoring, observations/s: \
                median \(format(result.observationsPerSecond.median)), \
                min \(format(result.observationsPerSecond.min)), max \(format(result.observationsPerSecond.max)) \
                (\(result.rounds) rounds; \(monitoringEvents) region events in the last)
                  one ranging cycle over \(result.trackedBeacons) tracked beacons (\(rate) of them heard in the \
                last second): \(String(format: "%.2f", result.rangingCycleMillisecondsMedian)) ms (median of 20)
                  at \(rate) adverts/s plus one ranging cycle per second: \
                \(String(format: "%.2f", result.coreShareAtRate * 100)) % of one core
                """)
        }
    }

    private func format(_ rate: Double) -> String { String(format: "%.2f M", rate / 1_000_000) }
}

/// HCI LE Advertising Report events, one iBeacon report each, laid out exactly as a controller
/// sends them (flags AD + Apple manufacturer data), for `beacons` distinct identities in a
/// deterministic shuffled order with varying RSSI.
struct SyntheticAdvertStream {
    static let uuids: [UUID] = (0..<16).map { low in
        UUID(uuid: (0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, UInt8(low)))
    }

    var bytes: [UInt8] = []
    var offsets: [Int] = [0]
    var count: Int { offsets.count - 1 }

    static func identity(_ index: Int) -> BeaconIdentity {
        BeaconIdentity(uuid: uuids[index % 16], major: UInt16(truncatingIfNeeded: index / 16), minor: UInt16(index % 16))
    }

    /// Region `key`: the first `beacons` regions are single beacons; the rest UUID+major groups.
    static func regionConstraint(_ key: Int, beacons: Int) -> BeaconIdentityConstraint {
        if key < beacons { return BeaconIdentityConstraint(identity(key)) }
        let group = key - beacons
        return .matching(uuid: uuids[group % 16], major: UInt16(truncatingIfNeeded: group / 16))
    }

    init(beacons: Int, events: Int, seed: UInt64 = 0xBEAC_0D) {
        var generator = SplitMix64(state: seed)
        bytes.reserveCapacity(events * 46)
        offsets.reserveCapacity(events + 1)
        var order = Array(0..<beacons)
        while count < events {
            order.shuffle(using: &generator)
            for index in order where count < events {
                append(Self.identity(index), address: UInt64(index), rssi: Int8(-45 - Int(generator.next() % 50)))
            }
        }
    }

    private mutating func append(_ identity: BeaconIdentity, address: UInt64, rssi: Int8) {
        let uuid = identity.uuid.uuid
        let ad: [UInt8] = [
            0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
            uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
            uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15,
            UInt8(identity.major >> 8), UInt8(identity.major & 0xFF),
            UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF), 0xC5,
        ]
        let parameters = 1 + 1 + 1 + 1 + 6 + 1 + ad.count + 1
        bytes += [0x3E, UInt8(parameters), 0x02, 0x01, 0x03, 0x01]
        for shift in stride(from: 0, to: 48, by: 8) { bytes.append(UInt8((address >> UInt64(shift)) & 0xFF)) }
        bytes.append(UInt8(ad.count))
        bytes += ad
        bytes.append(UInt8(bitPattern: rssi))
        offsets.append(bytes.count)
    }
}
