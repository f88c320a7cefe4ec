import ArgumentParser
import BeaconKit
import Fleet
import Foundation

/// `beacond-bench fleet`: what one remote reading costs a consuming node, on one core — the MQTT message as it
/// arrives (topic and ESPresense JSON) → `ReceiverDirectory` (topic, JSON, room) → the region monitor with
/// `--regions` regions. The broker and libmosquitto are not in it (`scripts/bench/mqtt-publish.py` measures a
/// whole node). Target (docs/performance.md): ≥ 100,000 readings/s (100 rooms × 1,000 beacons at 1 Hz) in
/// well under one core.
struct FleetBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Remote readings consumed per second: ESPresense JSON → receivers → monitoring (run with -c release).")

    @Option(help: "Rooms (receivers) publishing.")
    var rooms = 100

    @Option(help: "Beacons each room hears.")
    var beacons = 1_000

    @Option(help: "Monitored regions (one per beacon, up to this many).")
    var regions = 1_000

    @Option(help: "Time budget per measurement, in seconds (at least 5 rounds run regardless).")
    var seconds = 3.0

    @Flag(help: "Print the figures as JSON.")
    var json = false

    struct Result: Codable {
        var rooms: Int
        var beacons: Int
        var regions: Int
        var readingsPerRound: Int
        var rounds: Int
        var readingsPerSecond: Rates
        var coreShareAt100kPerSecond: Double
    }

    func validate() throws {
        guard rooms > 0, beacons > 0, beacons <= 65_536, regions >= 0, seconds > 0 else {
            throw ValidationError("--rooms and --beacons (at most 65536) must be positive, --regions at least 0")
        }
    }

    func run() throws {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        // The messages as the broker delivers them: one reading per beacon per room, ESPresense v4's keys.
        var messages: [(topic: String, payload: [UInt8])] = []
        for beacon in 0..<beacons {
            let id = ESPresense.deviceID(BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(beacon)))
            for room in 0..<rooms {
                let json =
                    #"{"mac":"c1d2e3f4a5b6","id":"\#(id)","rssi@1m":-59,"rssi":-\#(60 + room % 30).25,"#
                    + #""rxAdj":0,"rssiVar":1.20,"distance":2.41,"var":0.05,"int":1020}"#
                messages.append(("espresense/devices/\(id)/room\(room)", Array(json.utf8)))
            }
        }
        var directory = ReceiverDirectory(ownRoom: "bench")
        var monitor = RegionMonitor<Int>(configuration: .default)
        var events: [MonitoringEvent<Int>] = []
        var clock: Int64 = 1_700_000_000_000_000
        for key in 0..<min(regions, beacons) {
            let constraint = try BeaconIdentityConstraint(uuid: uuid, major: 1, minor: UInt16(key))
            monitor.startMonitoring(
                BeaconRegion(identifier: "r\(key)", constraint: constraint), for: key,
                at: Timestamp(microsecondsSinceEpoch: clock), into: &events)
        }
        var sightings = 0
        let timer = RoundTimer(budget: .milliseconds(Int(seconds * 1000)))
        let times = try timer.measure {
            sightings = 0
            for message in messages {
                clock += 10
                let now = Timestamp(microsecondsSinceEpoch: clock)
                for input in directory.receive(topic: message.topic, payload: message.payload, at: now) {
                    switch input {
                    case .sighting(let identity, let rssi, _, let receiver, _, _):
                        sightings += 1
                        monitor.observe(identity, rssi: rssi, by: receiver, at: now, into: &events)
                    case .receiverOnline(let receiver):
                        monitor.receiverCameOnline(receiver, at: now, into: &events)
                    case .receiverOffline, .receiverForgotten, .receiverHeard, .ignored, .dropped, .bridgeChanged:
                        break
                    }
                }
                events.removeAll(keepingCapacity: true)
            }
            guard sightings == messages.count else {
                throw ValidationError("\(sightings) sightings from \(messages.count) readings (dropped: \(directory.lastDropped ?? "none"))")
            }
        }
        let rates = times.rates(perRound: messages.count)
        let result = Result(
            rooms: rooms, beacons: beacons, regions: min(regions, beacons), readingsPerRound: messages.count,
            rounds: times.rounds, readingsPerSecond: rates, coreShareAt100kPerSecond: 100_000 / rates.median)
        if json {
            try JSONOutput.print(result)
        } else {
            print(
                """
                fleet: \(result.readingsPerRound) readings per round (\(rooms) rooms × \(beacons) beacons), \
                \(result.regions) monitored regions, \(result.rounds) rounds
                  readings/s: median \(Int(rates.median)), slowest round \(Int(rates.min)), fastest \(Int(rates.max))
                  share of one core at 100,000 readings/s: \(String(format: "%.2f", result.coreShareAt100kPerSecond))
                """)
        }
    }
}
