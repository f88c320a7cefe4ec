import ArgumentParser
import BeaconKit
import Fleet
import Foundation
import MainLoopKit
import MQTT

/// `beacond-bench mqtt-flood`: publishes ESPresense readings to a broker at a fixed rate, as `--rooms` receivers
/// each hearing `--beacons` beacons once a round would, for `scripts/bench/fleet-consume.py` (a consuming node
/// at 100,000 readings/s). Python clients top out near 20,000 messages/s on this machine; this one goes through
/// libmosquitto on the same loop as beacond.
struct MQTTFlood: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt-flood",
        abstract: "Publish ESPresense readings to a broker at a fixed rate (load for a consuming node).",
        discussion: """
            Announces each room online (retained, as a node does), then publishes one reading per room and beacon \
            per round, paced in 10 ms steps to --rate messages/s, for --seconds. Prints one JSON line at the end: \
            messages published, publish calls refused, and the rate reached.
            """)

    @Option(help: "The broker's host.")
    var host = "127.0.0.1"

    @Option(help: "The broker's port.")
    var port = 1883

    @Option(help: "Rooms (receivers) publishing.")
    var rooms = 100

    @Option(help: "Beacons each room hears.")
    var beacons = 1_000

    @Option(help: "Messages per second, all rooms together.")
    var rate = 100_000

    @Option(help: "How long to publish, in seconds.")
    var seconds = 10.0

    @Option(help: "The proximity UUID of the beacons (minors 0 to --beacons - 1, major 1).")
    var uuid = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"

    func validate() throws {
        guard rooms > 0, beacons > 0, beacons <= 65_536, rate > 0, seconds > 0 else {
            throw ValidationError("--rooms, --rate, --seconds and --beacons (at most 65536) must be positive")
        }
        guard UUID(uuidString: uuid) != nil else { throw ValidationError("--uuid \(uuid) is not a UUID") }
    }

    func run() throws {
        let proximityUUID = UUID(uuidString: uuid)!
        let roomNames = (0..<rooms).map { "flood\($0)" }
        // Built once: publishing, not formatting, is what this measures.
        var messages: [MQTTMessage] = []
        messages.reserveCapacity(rooms * beacons)
        for beacon in 0..<beacons {
            let id = ESPresense.deviceID(BeaconIdentity(uuid: proximityUUID, major: 1, minor: UInt16(beacon)))
            for (index, room) in roomNames.enumerated() {
                let json =
                    #"{"id":"\#(id)","rssi@1m":-59,"rssi":-\#(60 + index % 30),"raw":2.41,"distance":2.41,"#
                    + #""speed":0,"mac":"c1d2e3f4a5b6","interval":1020}"#
                messages.append(MQTTMessage(topic: ESPresense.deviceTopic(deviceID: id, room: room), text: json))
            }
        }
        let loop = try MainLoop()
        let client = try MQTTClient(
            options: MQTTOptions(host: host, port: port, clientID: "beacond-bench-flood-\(getpid())"),
            loop: loop)
        var published = 0
        var refused = 0
        var started: ContinuousClock.Instant?
        var finished: ContinuousClock.Instant?
        let total = Duration.milliseconds(Int(seconds * 1000))
        func tick() {
            guard let start = started else { return }
            let elapsed = start.duration(to: .now)
            let due = min(
                Double(rate) * seconds,
                Double(rate)
                    * (Double(elapsed.components.seconds)
                        + Double(elapsed.components.attoseconds) / 1e18))
            while Double(published + refused) < due {
                do {
                    try client.publish(messages[(published + refused) % messages.count])
                    published += 1
                } catch {
                    refused += 1
                }
            }
            if elapsed >= total {
                finished = .now
                client.stop()
                loop.stop()
                return
            }
            _ = loop.schedule(at: .now + .milliseconds(10), handler: tick)
        }
        client.handlers.onStateChange = { state in
            guard state == .connected, started == nil else { return }
            for room in roomNames {
                _ = try? client.publish(MQTTMessage(topic: ESPresense.statusTopic(room: room), text: "online", retain: true))
            }
            started = .now
            tick()
        }
        client.start()
        _ = loop.schedule(at: .now + .seconds(10)) {
            if started == nil {
                FileHandle.standardError.write(Data("beacond-bench: no connection to \(host):\(port) in 10 s\n".utf8))
                Foundation.exit(69)
            }
        }
        loop.run()
        let took = started.map { $0.duration(to: finished ?? .now) } ?? .zero
        let secondsTaken = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        print(#"{"published":\#(published),"refused":\#(refused),"seconds":\#(secondsTaken),"rate":\#(Double(published) / max(secondsTaken, 1e-9))}"#)
    }
}
