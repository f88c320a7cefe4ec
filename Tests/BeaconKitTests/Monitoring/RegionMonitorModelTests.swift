import BeaconKit
import TestKit
import Testing

/// One call on a monitor, generated at random and applied to both RegionMonitor and the naive oracle.
enum MonitorModelOp {
    case start(key: String, region: BeaconRegion, at: Timestamp)
    case stop(key: String, at: Timestamp)
    case restore(key: String, saved: MonitoredRegion, at: Timestamp)
    case observe(BeaconObservation)
    case advance(Timestamp)
    case requestState(key: String, at: Timestamp)
    case suspend(Timestamp)
    case resume(Timestamp)

    func apply(to monitor: inout RegionMonitor<String>, into events: inout [MonitoringEvent<String>]) {
        switch self {
        case .start(let key, let region, let time): monitor.startMonitoring(region, for: key, at: time, into: &events)
        case .stop(let key, let time): monitor.stopMonitoring(key, at: time, into: &events)
        case .restore(let key, let saved, let time): monitor.restore(saved, for: key, at: time)
        case .observe(let sighting): monitor.observe(sighting, into: &events)
        case .advance(let time): monitor.advance(to: time, into: &events)
        case .requestState(let key, let time): monitor.requestState(for: key, at: time, into: &events)
        case .suspend(let time): monitor.suspendDetection(at: time, into: &events)
        case .resume(let time): monitor.resumeDetection(at: time)
        }
    }
}

/// A seeded generator, so a failing run can be replayed from its seed.
typealias MonitorModelRandom = SplitMix64

/// Random calls over few keys, beacons and RSSI values, with time steps that often land exactly on the 30 s
/// exit timeout, so boundaries, shared beacons and replacements happen constantly.
struct MonitorModelGenerator {
    var random: MonitorModelRandom
    var time = MonitorTestKit.base
    let lateSightings: Bool
    let restores: Bool
    static let keys = ["a", "b", "c", "d", "e", "f"]
    static let uuids = [MonitorTestKit.uuidA, MonitorTestKit.uuidB]
    static let rssis: [Int8?] = [nil, -50, -70, -71, -75, -80, -81, -95]
    static let steps: [Int64] = [0, 0, 1, 5, 10, 29, 30, 31].map { $0 * 1_000_000 }

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func timestamp() -> Timestamp {
        time += pick(Self.steps) + (chance(10) ? 1 : 0)
        return Timestamp(microsecondsSinceEpoch: time)
    }

    mutating func region(_ key: String) throws -> BeaconRegion {
        let uuid = pick(Self.uuids)
        let constraint: BeaconIdentityConstraint
        switch Int.random(in: 0..<3, using: &random) {
        case 0: constraint = try BeaconIdentityConstraint(uuid: uuid)
        case 1: constraint = try BeaconIdentityConstraint(uuid: uuid, major: pick([1, 2]))
        default: constraint = try BeaconIdentityConstraint(uuid: uuid, major: pick([1, 2]), minor: pick([1, 2]))
        }
        return BeaconRegion(identifier: key, constraint: constraint, notifyOnEntry: chance(75), notifyOnExit: chance(75))
    }

    mutating func next() throws -> MonitorModelOp {
        let roll = Int.random(in: 0..<100, using: &random)
        let key = pick(Self.keys)
        switch roll {
        case 0..<10: return .start(key: key, region: try region(key), at: timestamp())
        case 10..<14: return .stop(key: key, at: timestamp())
        case 14..<18 where restores:
            let at = timestamp()
            let lastSeen = chance(80) ? Timestamp(microsecondsSinceEpoch: time - pick(Self.steps) * 2) : nil
            let saved = MonitoredRegion(
                region: try region(key), state: pick(RegionState.allCases),
                lastSeen: lastSeen, lastDeterminedState: pick(RegionState.allCases))
            return .restore(key: key, saved: saved, at: at)
        case 18..<30: return .advance(timestamp())
        case 30..<35: return .requestState(key: key, at: timestamp())
        case 35..<38: return .suspend(timestamp())
        case 38..<43: return .resume(timestamp())
        default:
            var at = timestamp()
            if lateSightings && chance(5) {
                at = Timestamp(microsecondsSinceEpoch: time - pick(Self.steps))
            }
            let identity = BeaconIdentity(uuid: pick(Self.uuids), major: pick([1, 2]), minor: pick([1, 2]))
            return .observe(
                BeaconObservation(
                    frame: BeaconFrame(identity: identity, measuredPower: -59), rssi: pick(Self.rssis),
                    address: BluetoothAddress(rawValue: UInt64.random(in: 0...3, using: &random)), addressType: 1,
                    timestamp: at))
        }
    }
}

@Suite("RegionMonitor against a naive model")
struct RegionMonitorModelTests {
    /// Where two event lists part, as a few readable lines; `nil` when they are equal.
    static func firstDifference(_ left: [MonitoringEvent<String>], _ right: [MonitoringEvent<String>]) -> String? {
        guard left != right else { return nil }
        let index = (0..<min(left.count, right.count)).first { left[$0] != right[$0] } ?? min(left.count, right.count)
        let window = max(0, index - 3)..<index + 3
        func lines(_ events: [MonitoringEvent<String>]) -> String {
            events[window.clamped(to: events.indices)].map(MonitorTestKit.line).joined(separator: " | ")
        }
        return "event \(index): \(lines(left)) ≠ \(lines(right))"
    }

    static let configurations: [MonitoringConfiguration] = {
        var configurations: [MonitoringConfiguration] = [.default]
        if let banded = try? MonitoringConfiguration(
            hysteresis: RSSIHysteresis(enterAtOrAbove: -70, absentBelow: -80))
        {
            configurations.append(banded)
        }
        if let single = try? MonitoringConfiguration(
            exitTimeout: .seconds(10), hysteresis: RSSIHysteresis(enterAtOrAbove: -75, absentBelow: -75))
        {
            configurations.append(single)
        }
        return configurations
    }()

    @Test("every call gives the oracle's events and state", arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func matchesOracle(seed: UInt64) throws {
        #expect(Self.configurations.count == 3)
        let configuration = Self.configurations[Int(seed) % Self.configurations.count]
        var generator = MonitorModelGenerator(random: MonitorModelRandom(state: seed), lateSightings: true, restores: true)
        var monitor = RegionMonitor<String>(configuration: configuration)
        var oracle = NaiveRegionMonitor(configuration)
        var eventCount = 0
        for step in 0..<3_000 {
            let op = try generator.next()
            var events: [MonitoringEvent<String>] = []
            op.apply(to: &monitor, into: &events)
            let expected = oracle.apply(op)
            eventCount += expected.count
            try #require(Self.firstDifference(events, expected) == nil, "seed \(seed) step \(step): \(op)")
            try #require(monitor.nextDeadline == oracle.nextDeadline, "seed \(seed) step \(step): \(op)")
            try #require(monitor.isDetectionSuspended == oracle.suspended)
            try #require(monitor.count == oracle.entries.count)
            for key in MonitorModelGenerator.keys {
                try #require(monitor.monitoredRegion(for: key) == oracle.snapshot(key), "seed \(seed) step \(step) key \(key)")
            }
        }
        #expect(eventCount > 1_000)
    }

    @Test(
        "advancing more or less often never changes the events, and they come in time order",
        arguments: [UInt64(11), 12, 13, 14])
    func speedIndependent(seed: UInt64) throws {
        let configuration = Self.configurations[Int(seed) % Self.configurations.count]
        var generator = MonitorModelGenerator(random: MonitorModelRandom(state: seed), lateSightings: false, restores: false)
        var often = RegionMonitor<String>(configuration: configuration)
        var never = RegionMonitor<String>(configuration: configuration)
        var oftenEvents: [MonitoringEvent<String>] = []
        var neverEvents: [MonitoringEvent<String>] = []
        for _ in 0..<3_000 {
            let op = try generator.next()
            op.apply(to: &often, into: &oftenEvents)
            if case .advance = op { continue }
            op.apply(to: &never, into: &neverEvents)
        }
        let end = Timestamp(microsecondsSinceEpoch: generator.time + 3_600_000_000)
        often.advance(to: end, into: &oftenEvents)
        never.advance(to: end, into: &neverEvents)
        #expect(oftenEvents.count > 1_000)
        #expect(Self.firstDifference(oftenEvents, neverEvents) == nil)
        #expect(zip(oftenEvents, oftenEvents.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
    }
}
