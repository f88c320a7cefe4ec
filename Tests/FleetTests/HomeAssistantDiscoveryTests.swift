import BeaconKit
import Fleet
import Foundation
import Testing

@Suite("Home Assistant discovery")
struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(prefix: "homeassistant", room: "kitchen", version: "0.3.0")
    let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)

    /// Home Assistant's own rule for discovery topics (mqtt/discovery.py, TOPIC_MATCHER in 2024.1).
    let topicRule = #/^homeassistant/(\w+)/(?:([a-zA-Z0-9_-]+)/)?([a-zA-Z0-9_-]+)/config$/#

    func object(_ payload: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])
    }

    @Test func theReceiverIsAConnectivitySensorOnItsStatusTopic() throws {
        let (topic, payload) = discovery.receiverConfig
        #expect(topic == "homeassistant/binary_sensor/beacond/beacond_kitchen_connectivity/config")
        #expect(topic.wholeMatch(of: topicRule) != nil)
        let config = try object(payload)
        #expect(config["state_topic"] as? String == "espresense/rooms/kitchen/status")
        #expect(config["payload_on"] as? String == "online" && config["payload_off"] as? String == "offline")
        #expect(config["device_class"] as? String == "connectivity" && config["unique_id"] as? String == "beacond_kitchen_connectivity")
        let device = try #require(config["device"] as? [String: Any])
        // Home Assistant refuses a device block with a key it does not know: only these.
        #expect(
            Set(device.keys).isSubset(of: [
                "identifiers", "connections", "manufacturer", "model", "name", "hw_version",
                "sw_version", "via_device", "suggested_area", "configuration_url",
            ]))
        #expect(device["identifiers"] as? [String] == ["beacond_kitchen"])
    }

    @Test func aBeaconIsADeviceTrackerARoomAndADistanceSensorAvailableWithItsReceiver() throws {
        let configs = discovery.beaconConfigs(identity)
        #expect(
            configs.map(\.topic) == [
                "homeassistant/device_tracker/beacond/beacond_kitchen_ibeacon_e2c56db5_dffb_48d2_b060_d0f5a71096e0_1_2/config",
                "homeassistant/sensor/beacond/beacond_kitchen_ibeacon_e2c56db5_dffb_48d2_b060_d0f5a71096e0_1_2_distance/config",
                "homeassistant/sensor/beacond/beacond_kitchen_ibeacon_e2c56db5_dffb_48d2_b060_d0f5a71096e0_1_2_room/config",
            ])
        #expect(configs.allSatisfy { $0.topic.wholeMatch(of: topicRule) != nil })
        let tracker = try object(configs[0].payload)
        #expect(tracker["state_topic"] as? String == discovery.presenceTopic(identity))
        #expect(tracker["source_type"] as? String == "bluetooth_le" && tracker["payload_reset"] as? String == "None")
        #expect(tracker["availability_topic"] as? String == "espresense/rooms/kitchen/status")
        // With a floor plan its attributes carry the position, as companion's trackers do.
        #expect(tracker["json_attributes_topic"] as? String == "beacond/kitchen/ibeacon_e2c56db5_dffb_48d2_b060_d0f5a71096e0_1_2/attributes")
        let attributes = try object(
            HomeAssistantDiscovery.attributes(
                Position(x: 2.456, y: 4, z: 1, floor: "ground", accuracy: 2.3, fixes: 4), room: "kitchen",
                at: Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)))
        #expect(attributes["x"] as? Double == 2.46 && attributes["y"] as? Double == 4 && attributes["z"] as? Double == 1)
        #expect(attributes["floor"] as? String == "ground" && attributes["room"] as? String == "kitchen")
        #expect(attributes["confidence"] as? Double == 77 && attributes["fixes"] as? Double == 4 && attributes["accuracy"] as? Double == 2.3)
        #expect(attributes["last_seen"] as? String == "2023-11-14T22:13:20.000000Z", "\(attributes)")
        let unsure = try object(
            HomeAssistantDiscovery.attributes(
                Position(x: 0, y: 0, z: 0, floor: "g", accuracy: 14, fixes: 1), room: "", at: Timestamp(microsecondsSinceEpoch: 1)))
        #expect(unsure["confidence"] as? Double == 0)
        let sensor = try object(configs[1].payload)
        #expect(sensor["unit_of_measurement"] as? String == "m" && sensor["device_class"] as? String == "distance")
        #expect(sensor["state_topic"] as? String == discovery.distanceTopic(identity))
        #expect(HomeAssistantDiscovery.presence(.inside) == "home" && HomeAssistantDiscovery.presence(.outside) == "not_home")
        #expect(HomeAssistantDiscovery.presence(.unknown) == "None")
        // Inside and placed: the tracker's state is the room; placed but gone: not_home.
        #expect(HomeAssistantDiscovery.presence(.inside, room: "kitchen") == "kitchen")
        #expect(HomeAssistantDiscovery.presence(.outside, room: "kitchen") == "not_home")
        let room = try object(configs[2].payload)
        #expect(room["state_topic"] as? String == discovery.roomTopic(identity))
        #expect(room["availability_topic"] as? String == "espresense/rooms/kitchen/status")
    }
}
