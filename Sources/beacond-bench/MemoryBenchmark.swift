import ArgumentParser
import BeaconKit
import Foundation

/// `beacond-bench memory`: resident memory added by tracking `--beacons` distinct iBeacons, each
/// observed `--observations` times, in the engine's table (`--table`). The regions of `--table pipeline` are set up after the
/// first sample, so they are part of the figure.
struct MemoryBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Resident memory of the tracked-beacon table (VmRSS before and after).")

    @Option(help: "Distinct beacon identities to track.")
    var beacons = 10_000

    @Option(help: "Observations fed per beacon (one per second of a 10 s ranging window by default).")
    var observations = 10

    @Option(help: "ranger: the ranging table alone; pipeline: ranging plus one monitored region per beacon.")
    var table: MeasuredTableKind = .ranger

    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        guard beacons > 0, observations > 0 else { throw ValidationError("--beacons and --observations must be positive") }
        // 16 UUIDs × 65,536 majors: beyond that identities would repeat.
        guard beacons <= 16 * 65_536 else { throw ValidationError("--beacons must be at most \(16 * 65_536)") }
    }

    struct Result: Codable {
        var table: String
        var standIn: Bool
        var beacons: Int
        var observationsPerBeacon: Int
        var before: ResidentMemory
        var after: ResidentMemory
        var addedBytes: Int
        var addedBytesPerBeacon: Double
    }

    func run() throws {
        let before = try ResidentMemory.sample()
        var table = makeTrackedBeaconTableForMemoryBench(self.table, beacons: beacons)
        for second in 0..<observations {
            for index in 0..<beacons {
                table.observe(Self.observation(of: index, at: second))
            }
        }
        let after = try ResidentMemory.sample()
        guard table.trackedBeacons == beacons else {
            throw ValidationError("table tracks \(table.trackedBeacons) beacons, expected \(beacons)")
        }
        let added = after.residentBytes - before.residentBytes
        let result = Result(
            table: table.name, standIn: table.isStandIn, beacons: beacons,
            observationsPerBeacon: observations, before: before, after: after,
            addedBytes: added, addedBytesPerBeacon: Double(added) / Double(beacons))
        withExtendedLifetime(table) {}
        if json {
            try JSONOutput.print(result)
        } else {
            print(
                """
                table: \(result.table)
                beacons: \(beacons), \(observations) observations each
                VmRSS before \(before.residentBytes / 1024) kB, after \(after.residentBytes / 1024) kB \
                (statm \(before.statmResidentBytes / 1024) → \(after.statmResidentBytes / 1024) kB), \
                peak \(after.peakResidentBytes / 1024) kB
                added: \(result.addedBytes / 1024) kB, \(String(format: "%.0f", result.addedBytesPerBeacon)) bytes per beacon
                """)
        }
    }

    static let uuids = SyntheticAdvertStream.uuids

    /// Beacon `index` (the pipeline bench's identities: 16 proximity UUIDs, distinct major/minor
    /// under each) at second `second`, RSSI varying so every observation updates its entry.
    static func observation(of index: Int, at second: Int) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: SyntheticAdvertStream.identity(index), measuredPower: -59),
            rssi: Int8(-60 - (index + second) % 30),
            address: BluetoothAddress(rawValue: UInt64(index)),
            addressType: 1,
            timestamp: Timestamp(microsecondsSinceEpoch: Int64(second) * 1_000_000))
    }
}
