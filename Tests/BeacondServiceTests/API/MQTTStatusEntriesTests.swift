import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import DBus
import Fleet
import Testing

/// `GetStatus`'s `MQTT*` keys as clients read them (docs/dbus-api.md): every key, its D-Bus type and its value.
@Suite("MQTT status entries")
struct MQTTStatusEntriesTests {
    /// Every key with its value while `[mqtt]` is off.
    static let off: [String: DBusValue] = [
        "MQTTBroker": .string(""), "MQTTState": .string("off"), "MQTTDetail": .string(""), "MQTTRoom": .string(""),
        "MQTTReadingsPublished": .uint64(0), "MQTTReadingsNotSent": .uint64(0), "MQTTRefused": .string(""),
        "MQTTReceiverCount": .uint32(0), "MQTTReceiversOnline": .uint32(0), "MQTTReadingsDropped": .uint64(0),
        "MQTTLastDropped": .string(""), "MQTTReceiversEvicted": .uint64(0),
    ]

    @Test func offAndFailedSayWhyNoNodeRuns() {
        #expect(MQTTNodeStatus.withoutNode(broker: nil, problem: nil).statusEntries == Self.off)
        var failed = Self.off
        failed["MQTTBroker"] = .string("mqtts://broker.lan:8883")
        failed["MQTTState"] = .string("failed")
        failed["MQTTDetail"] = .string("ca_file /x: No such file or directory")
        #expect(
            MQTTNodeStatus.withoutNode(
                broker: MQTTSettings.Broker(useTLS: true, host: "broker.lan", port: 8883),
                problem: "ca_file /x: No such file or directory"
            ).statusEntries == failed)
    }

    @Test func aRunningNodesConnectionCountersAndReceivers() {
        let status = MQTTNodeStatus(
            broker: MQTTSettings.Broker(useTLS: false, host: "fe80::1", port: 1883), connection: .waiting("connection refused"),
            room: "hall", readingsPublished: 7, readingsNotSent: 2, lastRefusal: "espresense/rooms/hall/status: not authorized",
            receivers: [
                ReceiverDirectory.Receiver(
                    room: "kitchen", id: ReceiverID(rawValue: 1), online: true,
                    lastReading: Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000), readings: 12),
                ReceiverDirectory.Receiver(room: "attic", id: ReceiverID(rawValue: 2), online: false, lastReading: nil, readings: 0),
            ],
            readingsDropped: 3, lastDropped: "espresense/devices/x/attic: not JSON", receiversEvicted: 4)
        #expect(
            status.statusEntries == [
                "MQTTBroker": .string("mqtt://[fe80::1]:1883"), "MQTTState": .string("waiting"),
                "MQTTDetail": .string("connection refused"), "MQTTRoom": .string("hall"),
                "MQTTReadingsPublished": .uint64(7), "MQTTReadingsNotSent": .uint64(2),
                "MQTTRefused": .string("espresense/rooms/hall/status: not authorized"),
                "MQTTReceiverCount": .uint32(2), "MQTTReceiversOnline": .uint32(1),
                "MQTTReadingsDropped": .uint64(3), "MQTTLastDropped": .string("espresense/devices/x/attic: not JSON"),
                "MQTTReceiversEvicted": .uint64(4),
            ])
        // The receivers themselves are ListReceivers' entries, not GetStatus's (up to 1,000 would make it ~46 KB).
        #expect(
            status.receivers.map(MQTTNodeStatus.receiverEntry) == [
                .vardict([
                    "Room": .string("kitchen"), "Online": .boolean(true),
                    "LastReading": .uint64(1_700_000_000_000_000), "Readings": .uint64(12),
                ]),
                .vardict(["Room": .string("attic"), "Online": .boolean(false), "LastReading": .uint64(0), "Readings": .uint64(0)]),
            ])
        let states: [(MQTTNodeStatus.Connection, String, String)] = [
            (.stopped, "stopped", ""), (.connecting, "connecting", ""), (.connected, "connected", ""),
        ]
        for (connection, state, detail) in states {
            var node = status
            node.connection = connection
            #expect(node.statusEntries["MQTTState"] == .string(state))
            #expect(node.statusEntries["MQTTDetail"] == .string(detail))
        }
    }
}
