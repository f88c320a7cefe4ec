import BeaconKit
@testable import BeacondCore
import Fleet
import Foundation
import Testing

/// `FleetPublishing` alone, without the core: what it owns (readings, Home Assistant's presence) and what it returns.
@Suite("fleet publishing, the value")
struct FleetPublishingTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let start = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)
    static let unplaced: @Sendable (BeaconIdentity) -> SightingRoom = { _ in .unplaced }

    static func configuration(homeAssistant: Bool) -> DaemonConfiguration {
        var configuration = DaemonConfiguration.defaults
        configuration.mqtt = MQTTSettings(room: "hall", publish: .all, homeAssistant: homeAssistant)
        return configuration
    }

    static func sighting(at time: Timestamp) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 2), measuredPower: -59),
            rssi: -65, address: BluetoothAddress(rawValue: 0xC1D2E3F4A5B6), addressType: 0, timestamp: time)
    }

    static func readings(_ outputs: [FleetPublishing.Output]) -> Int {
        outputs.count { if case .reading = $0 { true } else { false } }
    }

    @Test("without a node nothing is published; with one, one reading per publish_interval")
    func readingsFollowTheNode() throws {
        var publishing = FleetPublishing()
        let observe = { (publishing: inout FleetPublishing, seconds: Double) in
            publishing.observedLocally(
                Self.sighting(at: Self.start + .milliseconds(Int64(seconds * 1000))),
                at: Self.start + .milliseconds(Int64(seconds * 1000)), placement: Self.unplaced, nearestOther: { _ in nil })
        }
        #expect(observe(&publishing, 0).isEmpty, "no node")
        publishing.start(room: "hall", configuration: Self.configuration(homeAssistant: false), monitoring: try MonitoringConfiguration())
        #expect(publishing.isPublishing && !publishing.publishesHomeAssistant)
        #expect(Self.readings(observe(&publishing, 1)) == 1)
        #expect(Self.readings(observe(&publishing, 1.5)) == 0, "within publish_interval")
        #expect(Self.readings(observe(&publishing, 2.1)) == 1)
        #expect(publishing.nextDeadline == nil, "no Home Assistant, no deadline")
        publishing.stop()
        #expect(observe(&publishing, 5).isEmpty)
    }

    @Test("with Home Assistant: the distance sensor shows the nearest receiver, and presence has a deadline")
    func homeAssistantPresence() throws {
        var publishing = FleetPublishing()
        publishing.start(room: "hall", configuration: Self.configuration(homeAssistant: true), monitoring: try MonitoringConfiguration())
        _ = publishing.connected(placement: Self.unplaced)
        let outputs = publishing.observedLocally(
            Self.sighting(at: Self.start), at: Self.start, placement: Self.unplaced, nearestOther: { _ in 0.25 })
        let distance = outputs.compactMap { output -> HomeAssistantPresence.Publication? in
            if case .reading(_, let distance) = output { distance } else { nil }
        }
        #expect(distance.map(\.text) == ["0.25"], "another receiver is nearer than this one: \(outputs)")
        #expect(outputs.contains { if case .retained = $0 { true } else { false } }, "presence published")
        #expect(publishing.nextDeadline != nil, "an exit timeout runs")
        // The deadline passes with no sighting: the beacon goes away, published as such.
        let later = try #require(publishing.nextDeadline)
        #expect(!publishing.advance(to: later, placement: Self.unplaced).isEmpty)
    }
}
