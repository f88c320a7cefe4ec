import BeaconKit
import Fleet
import Foundation
import Testing

@Suite("receiver directory")
struct ReceiverDirectoryTests {
    let now = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
    let identity = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
    var deviceID: String { ESPresense.deviceID(identity) }

    func reading(_ id: String? = nil, rssi: Double = -70.4) -> [UInt8] {
        Array(ESPresenseReading(id: id ?? deviceID, rssiAtOneMetre: -59, rssi: rssi, distance: 2).json.utf8)
    }

    @Test func statusAndReadingsBecomeWhatTheMonitorNeeds() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        #expect(directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), at: now)
            == [.receiverOnline(ReceiverID(rawValue: 1))])
        #expect(directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), at: now) == [.ignored])
        #expect(directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(), at: now)
            == [.sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: -70.4)])
        #expect(directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("offline".utf8), at: now)
            == [.receiverOffline(ReceiverID(rawValue: 1))])
        // A reading from a receiver marked offline: it is back, then its sighting.
        #expect(directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(), at: now)
            == [.receiverOnline(ReceiverID(rawValue: 1)), .sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: -70.4)])
        let kitchen = directory.receiver("kitchen")
        #expect(kitchen?.online == true && kitchen?.readings == 2 && kitchen?.lastReading == now)
    }

    @Test func ownPublicationsOtherDevicesAndOtherTopicsAreIgnored() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        #expect(directory.receive(topic: "espresense/devices/\(deviceID)/hall", payload: reading(), at: now) == [.ignored])
        #expect(directory.receive(topic: "espresense/rooms/hall/status", payload: Array("offline".utf8), at: now) == [.ignored])
        #expect(directory.receive(topic: "espresense/devices/mac:c1d2e3f4a5b6/kitchen", payload: reading("mac:c1d2e3f4a5b6"), at: now) == [.ignored])
        #expect(directory.receive(topic: "espresense/rooms/kitchen/telemetry", payload: Array("{}".utf8), at: now) == [.ignored])
        #expect(directory.receivers.isEmpty && directory.readingsDropped == 0)
        // An empty retained status (a node removed) for a room never seen adds nothing.
        #expect(directory.receive(topic: "espresense/rooms/gone/status", payload: [], at: now) == [.ignored])
    }

    @Test func badMessagesAreCountedAndSayWhy() {
        var directory = ReceiverDirectory(ownRoom: "hall", maximumPayload: 1000)
        let topic = "espresense/devices/\(deviceID)/kitchen"
        let cases: [([UInt8], String, String)] = [
            (Array("not json".utf8), topic, "not JSON"),
            (Array(#"{"id":"\#(deviceID)"}"#.utf8), topic, "no \"distance\""),
            ([UInt8](repeating: 0x20, count: 1_000_000), topic, "1000000 bytes"),
            (reading("iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-9-9"), topic, "the payload's id"),
            (Array("maybe".utf8), "espresense/rooms/kitchen/status", "neither online nor offline"),
        ]
        for (payload, topic, reason) in cases {
            guard case .dropped(let text)? = directory.receive(topic: topic, payload: payload, at: now).first else {
                Issue.record("\(reason): not dropped")
                continue
            }
            #expect(text.contains(reason), "\(text)")
        }
        #expect(directory.readingsDropped == 5 && directory.receivers.isEmpty)
    }

    @Test func hostileNumbersDoNotTrap() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        let inputs = directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(rssi: 1e300), at: now)
        #expect(inputs.last == .sighting(identity, rssi: 127, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: nil))
    }

    @Test func receiversAreBoundedAndTheBrokerLossTakesThemAllOffline() {
        var directory = ReceiverDirectory(ownRoom: "hall", capacity: 3)
        for room in 0..<10 {
            _ = directory.receive(topic: "espresense/devices/\(deviceID)/room\(room)", payload: reading(), at: now)
        }
        #expect(directory.receivers.count == 3 && directory.readingsDropped == 7)
        #expect(directory.lastDropped?.contains("more than 3 receivers") == true)
        #expect(directory.brokerLost() == (1...3).map { ReceiverID(rawValue: $0) })
        #expect(directory.brokerLost().isEmpty)
        #expect(directory.receivers.allSatisfy { !$0.online })
    }

    @Test func aDroppedBridgeTakesEveryReceiverOfflineUntilHeardAgain() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        let bridge = "$SYS/broker/connection/bridge-site2/state"
        #expect(directory.receive(topic: bridge, payload: Array("1".utf8), at: now) == [.ignored])
        _ = directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), at: now)
        _ = directory.receive(topic: "espresense/rooms/garage/status", payload: Array("online".utf8), at: now)
        _ = directory.receive(topic: "espresense/rooms/attic/status", payload: Array("offline".utf8), at: now)
        // Down: both online receivers (which side of the bridge each is on cannot be known), not the offline one.
        #expect(directory.receive(topic: bridge, payload: Array("0".utf8), at: now)
            == [.bridgeChanged(name: "bridge-site2", connected: false),
                .receiverOffline(ReceiverID(rawValue: 1)), .receiverOffline(ReceiverID(rawValue: 2))])
        #expect(directory.bridgesDown == ["bridge-site2"])
        // Repeated (a retained 0 at resubscription): nothing new goes offline.
        #expect(directory.receive(topic: bridge, payload: Array("0".utf8), at: now)
            == [.bridgeChanged(name: "bridge-site2", connected: false)])
        // A receiver on this side is heard again with its next reading.
        #expect(directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(), at: now)
            == [.receiverOnline(ReceiverID(rawValue: 1)), .sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: -70.4)])
        #expect(directory.receive(topic: bridge, payload: Array("1".utf8), at: now) == [.bridgeChanged(name: "bridge-site2", connected: true)])
        #expect(directory.bridgesDown.isEmpty)
        // Beyond the bridge: its retained status crosses again.
        #expect(directory.receive(topic: "espresense/rooms/garage/status", payload: Array("online".utf8), at: now)
            == [.receiverOnline(ReceiverID(rawValue: 2))])
        // Not a bridge state: dropped with why; other $SYS topics are not a receiver's.
        #expect(directory.receive(topic: bridge, payload: Array("up".utf8), at: now) == [.dropped("\(bridge): bridge state \"up\" is neither 1 nor 0")])
        #expect(directory.receive(topic: "$SYS/broker/connection//state", payload: Array("0".utf8), at: now) == [.ignored])
        #expect(directory.receive(topic: "$SYS/broker/uptime", payload: Array("5 seconds".utf8), at: now) == [.ignored])
        #expect(directory.receivers.filter(\.online).count == 2)
    }

    @Test func bridgesDownAreBounded() {
        var directory = ReceiverDirectory(ownRoom: "hall", capacity: 3)
        for number in 0..<3 {
            #expect(directory.receive(topic: "$SYS/broker/connection/b\(number)/state", payload: Array("0".utf8), at: now)
                == [.bridgeChanged(name: "b\(number)", connected: false)])
        }
        #expect(directory.receive(topic: "$SYS/broker/connection/b9/state", payload: Array("0".utf8), at: now)
            == [.dropped("$SYS/broker/connection/b9/state: more than 3 bridges down")])
        #expect(directory.bridgesDown.count == 3)
    }
}
