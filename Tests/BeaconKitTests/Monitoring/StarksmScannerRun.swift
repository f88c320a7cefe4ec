import BeaconKit
import Foundation

/// One starksm64 scanner run as extracted into Tests/Fixtures/monitoring/ by
/// scripts/extract-starksm64-monitoring-fixture.py, replayed through one RegionMonitor per scanner (room).
struct StarksmScannerRun {
    struct Sighting {
        var offsetMilliseconds: Int64
        var room: Int
        var identity: BeaconIdentity
        var rssi: Int8
    }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
    }

    /// First event of the run, ms since the Unix epoch.
    let start: Int64
    /// Each scanner's last event (heartbeats included), ms after `start`: when it stopped listening.
    let ends: [Int: Int64]
    let sightings: [Sighting]
    let beacons: [BeaconIdentity]

    init(fixture name: String, filePath: String = #filePath) throws {
        let root = URL(fileURLWithPath: filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let url = root.appendingPathComponent("Tests/Fixtures/monitoring/\(name).txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        var uuid: UUID?
        var start: Int64?
        var ends: [Int: Int64] = [:]
        var sightings: [Sighting] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ").map(String.init)
            func bad() -> FixtureError { FixtureError(description: "\(name): cannot read '\(line)'") }
            switch (fields.first, fields.count) {
            case ("uuid", 2):
                guard let value = UUID(uuidString: fields[1]) else { throw bad() }
                uuid = value
            case ("start", 2):
                guard let value = Int64(fields[1]) else { throw bad() }
                start = value
            case ("end", 3):
                guard let room = Int(fields[1]), let value = Int64(fields[2]) else { throw bad() }
                ends[room] = value
            case (_, 5):
                guard let uuid, let offset = Int64(fields[0]), let room = Int(fields[1]),
                    let major = UInt16(fields[2]), let minor = UInt16(fields[3]), let rssi = Int8(fields[4])
                else { throw bad() }
                sightings.append(
                    Sighting(
                        offsetMilliseconds: offset, room: room,
                        identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), rssi: rssi))
            default:
                throw bad()
            }
        }
        guard let start, !ends.isEmpty, !sightings.isEmpty else {
            throw FixtureError(description: "\(name): no start, scanners or sightings")
        }
        self.start = start
        self.ends = ends
        self.sightings = sightings
        self.beacons = Set(sightings.map(\.identity)).sorted()
    }

    func timestamp(_ offsetMilliseconds: Int64) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: (start + offsetMilliseconds) * 1_000)
    }

    /// Every room's monitor after the whole run, and the events it produced. Regions are keyed by minor (the
    /// beacon number in these runs), one per beacon with its full identity, all started at the run's start;
    /// each monitor advances to its scanner's end, not beyond.
    func replay(_ configuration: MonitoringConfiguration)
        -> (monitors: [Int: RegionMonitor<UInt16>], events: [Int: [MonitoringEvent<UInt16>]])
    {
        var monitors: [Int: RegionMonitor<UInt16>] = [:]
        var events: [Int: [MonitoringEvent<UInt16>]] = [:]
        let fresh = RegionMonitor<UInt16>(configuration: configuration)
        for room in ends.keys {
            for beacon in beacons {
                let region = BeaconRegion(
                    identifier: "beacon \(beacon.minor)",
                    constraint: BeaconIdentityConstraint(beacon))
                monitors[room, default: fresh].startMonitoring(
                    region, for: beacon.minor, at: timestamp(0),
                    into: &events[room, default: []])
            }
        }
        for sighting in sightings {
            let observation = BeaconObservation(
                frame: BeaconFrame(identity: sighting.identity, measuredPower: -62), rssi: sighting.rssi,
                address: BluetoothAddress(rawValue: 0), addressType: 0,
                timestamp: timestamp(sighting.offsetMilliseconds))
            monitors[sighting.room, default: fresh].observe(observation, into: &events[sighting.room, default: []])
        }
        for (room, end) in ends {
            monitors[room, default: fresh].advance(to: timestamp(end), into: &events[room, default: []])
        }
        return (monitors, events)
    }
}
