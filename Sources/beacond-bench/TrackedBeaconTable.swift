import ArgumentParser
import BeaconKit

/// What `beacond-bench memory` measures: a table of tracked beacons fed with observations.
protocol MeasuredBeaconTable {
    /// Printed with every figure, so it is always clear what was measured.
    var name: String { get }
    var isStandIn: Bool { get }
    var trackedBeacons: Int { get }
    mutating func observe(_ observation: BeaconObservation)
}

enum MeasuredTableKind: String, ExpressibleByArgument, CaseIterable {
    /// The ranging table alone (`BeaconRanger`): the per-beacon state the daemon keeps.
    case ranger
    /// The whole engine: ranging plus one monitored region per beacon (`BeaconPipeline`).
    case pipeline
}

/// The engine's tracked-beacon table, ranging the benchmark's 16 proximity UUIDs so every
/// observed beacon is tracked, with the cap raised to the number of beacons measured.
func makeTrackedBeaconTableForMemoryBench(_ kind: MeasuredTableKind, beacons: Int) -> any MeasuredBeaconTable {
    var ranging = RangingConfiguration()
    ranging.maxTrackedBeacons = max(ranging.maxTrackedBeacons, beacons)
    switch kind {
    case .ranger:
        var ranger = BeaconRanger<Int>(configuration: ranging)
        for (key, uuid) in MemoryBenchmark.uuids.enumerated() {
            ranger.startRanging(.matching(uuid: uuid), key: key)
        }
        return RangerTable(ranger: ranger)
    case .pipeline:
        var pipeline = BeaconPipeline<Int>(ranging: ranging, emitsObservations: false)
        var events: [BeaconPipeline<Int>.Event] = []
        for (key, uuid) in MemoryBenchmark.uuids.enumerated() {
            pipeline.ranger.startRanging(.matching(uuid: uuid), key: -1 - key)
        }
        for index in 0..<beacons {
            let identity = MemoryBenchmark.observation(of: index, at: 0).identity
            pipeline.startMonitoring(
                BeaconRegion(identifier: "region-\(index)", constraint: BeaconIdentityConstraint(identity)),
                key: index, at: .epoch, into: &events)
        }
        return PipelineTable(pipeline: pipeline)
    }
}

struct RangerTable: MeasuredBeaconTable {
    var ranger: BeaconRanger<Int>
    var name: String { "BeaconRanger (ranging table, \(MemoryBenchmark.uuids.count) ranged UUIDs)" }
    var isStandIn: Bool { false }
    var trackedBeacons: Int { ranger.trackedBeaconCount }
    mutating func observe(_ observation: BeaconObservation) { ranger.observe(observation) }
}

struct PipelineTable: MeasuredBeaconTable {
    var pipeline: BeaconPipeline<Int>
    var events: [BeaconPipeline<Int>.Event] = []
    var name: String { "BeaconPipeline (ranging table + one monitored region per beacon)" }
    var isStandIn: Bool { false }
    var trackedBeacons: Int { pipeline.ranger.trackedBeaconCount }
    mutating func observe(_ observation: BeaconObservation) {
        pipeline.observe(observation, into: &events)
        events.removeAll(keepingCapacity: true)
    }
}
