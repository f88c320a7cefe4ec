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
        #expect(
            directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), at: now)
                == [.receiverOnline(ReceiverID(rawValue: 1))])
        #expect(directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), at: now) == [.ignored])
        #expect(
            directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(), at: now)
                == [.sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: -70.4)])
        #expect(
            directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("offline".utf8), at: now)
                == [.receiverOffline(ReceiverID(rawValue: 1))])
        // A reading from a receiver marked offline: it is back, then its sighting.
        #expect(
            directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(), at: now)
                == [
                    .receiverOnline(ReceiverID(rawValue: 1)),
                    .sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: -70.4),
                ])
        let kitchen = directory.receiver("kitchen")
        #expect(kitchen?.online == true && kitchen?.readings == 2 && kitchen?.lastReading == now)
    }

    /// The daemon asks each remote reading's receiver for its room by id (issue 22: by a search of every receiver).
    @Test func aReceiversRoomIsFoundByItsID() {
        let known = [ReceiverDirectory.Receiver(room: "attic", id: ReceiverID(rawValue: 7), online: false, lastReading: nil, readings: 0)]
        var directory = ReceiverDirectory(ownRoom: "hall", known: known)
        _ = directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), at: now)
        var inputs: [ReceiverDirectory.Input] = [.ignored]
        directory.receive(topic: "espresense/devices/\(deviceID)/cellar", payload: reading(), at: now, into: &inputs)
        #expect(
            inputs == [
                .ignored, .receiverOnline(ReceiverID(rawValue: 9)),
                .sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 9), measuredPower: -59, exactRSSI: -70.4),
            ])
        #expect(directory.room(of: ReceiverID(rawValue: 7)) == "attic")
        #expect(directory.room(of: ReceiverID(rawValue: 8)) == "kitchen")
        #expect(directory.room(of: ReceiverID(rawValue: 9)) == "cellar")
        #expect(directory.room(of: ReceiverID(rawValue: 10)) == nil && directory.room(of: .local) == nil)
    }

    /// The payload's id and the topic's are one in any case, as `mqtt_room` compares them (lowercased), also
    /// where lowercasing is not ASCII's.
    @Test func aPayloadsIDMatchesItsTopicsInAnyCase() {
        #expect(ESPresense.sameDeviceID("iBeacon:E2C56DB5-dffb-48D2-b060-D0F5A71096E0-1-2", "ibeacon:e2c56db5-DFFB-48d2-B060-d0f5a71096e0-1-2"))
        #expect(!ESPresense.sameDeviceID("iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2", "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-3"))
        #expect(!ESPresense.sameDeviceID("name:a", "name:a1") && !ESPresense.sameDeviceID("name:a1", "name:a"))
        // `@` and `` ` `` differ from `` ` `` and `@` by 0x20 too, but are not letters.
        #expect(!ESPresense.sameDeviceID("name:@", "name:`") && !ESPresense.sameDeviceID("name:[", "name:{"))
        #expect(ESPresense.sameDeviceID("name:ÄRGER", "name:ärger") && !ESPresense.sameDeviceID("name:Ärger", "name:ärgern"))
        var directory = ReceiverDirectory(ownRoom: "hall")
        let upper = "iBeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-1-2"
        #expect(
            directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(upper), at: now).last
                == .sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: -70.4))
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

    /// Ids of a kind beacond reads but malformed (issue 39: a misconfigured node was invisible): dropped and counted
    /// with the topic, its room, and why; never the digits of a key.
    @Test func malformedIDsOfKnownKindsAreDroppedAndCounted() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        let key31 = String(repeating: "ab", count: 15) + "c"
        let malformed = [
            "irk:" + key31, "irk:" + String(repeating: "ab", count: 16) + "c", "irk:" + String(repeating: "zz", count: 16),
            "eddy:" + String(repeating: "a", count: 21) + "-0123456789ab", "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-70000-1",
            "altBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e-1-2", "IBEACON:not-a-uuid",
        ]
        for (index, id) in malformed.enumerated() {
            let topic = "espresense/devices/\(id)/attic"
            guard case .dropped(let text)? = directory.receive(topic: topic, payload: reading(id), at: now).first else {
                Issue.record("\(id): not dropped")
                continue
            }
            #expect(directory.readingsDropped == UInt64(index + 1))
            #expect(text.hasSuffix("/attic: the device id is not one beacond reads") || text.contains("/attic: "), "\(text)")
            #expect(text.contains("attic") && text.contains("espresense/devices/"), "\(text)")
            if id.hasPrefix("irk:") {
                #expect(!text.contains(String(id.dropFirst(4).prefix(8))), "key digits in \(text)")
                #expect(text.contains("irk:…"), "\(text)")
            } else {
                #expect(text.contains(id), "\(text)")
            }
        }
        // A kind beacond does not read is no mistake: ignored, not counted.
        #expect(directory.receive(topic: "espresense/devices/name:fridge/attic", payload: reading("name:fridge"), at: now) == [.ignored])
        #expect(directory.readingsDropped == UInt64(malformed.count))
    }

    /// A drop for a bad room names its topic (cut short: a topic may be 64 KiB).
    @Test func aBadRoomsDropNamesTheTopic() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        let room = "Bad Room!" + String(repeating: "x", count: 5000)
        let inputs = directory.receive(topic: "espresense/devices/\(deviceID)/\(room)", payload: reading(), at: now)
        guard case .dropped(let text)? = inputs.first else {
            Issue.record("not dropped: \(inputs)")
            return
        }
        #expect(text.hasPrefix("espresense/devices/\(deviceID)/Bad Room!xxx"), "\(text)")
        #expect(text.utf8.count < 400, "\(text.utf8.count) bytes")
        #expect(directory.lastDropped == text)
    }

    /// Values no radio or ESPresense node produces (issue 21: an `rssi` of 1e308 or 200 entered a region with
    /// EnterRSSI -70, a `distance` of 1e308, -5 or 0 placed a beacon at 1.3e-7 m) are dropped with why.
    @Test func readingsNoRadioCanProduceAreDroppedWithWhy() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        let topic = "espresense/devices/\(deviceID)/kitchen"
        func payload(_ fields: String) -> [UInt8] { Array(#"{"id":"\#(deviceID)",\#(fields)}"#.utf8) }
        let refused: [(String, String)] = [
            (#""rssi":1e308,"distance":2"#, #""rssi" is 1e+308; it must be within -127…20 dBm"#),
            (#""rssi":200,"distance":2"#, #""rssi" is 200; it must be within -127…20 dBm"#),
            (#""rssi":-128,"distance":2"#, #""rssi" is -128; it must be within -127…20 dBm"#),
            (#""rssi":15,"rxAdj":-10,"distance":2"#, #""rssi" is 15; it must be within -137…10 dBm"#),
            (#""rssi":-65,"rxAdj":60,"distance":2"#, #""rxAdj" is 60; it must be within -50…50 dB"#),
            (#""rssi":-65,"rssi@1m":100,"distance":2"#, #""rssi@1m" is 100; it must be within -127…20 dBm"#),
            (#""rssi":-65,"distance":1e308"#, #""distance" is 1e+308; it must be at least 0.001 and at most 1000 m"#),
            (#""rssi":-65,"distance":-5"#, #""distance" is -5; it must be at least 0.001 and at most 1000 m"#),
            (#""rssi":-65,"distance":0"#, #""distance" is 0; it must be at least 0.001 and at most 1000 m"#),
            (#""distance":1000.5"#, #""distance" is 1000.5; it must be at least 0.001 and at most 1000 m"#),
            // Issue 39: the smallest double above 0 is no distance, and an rxAdj of 50.4 is beyond ±50 before rounding.
            (#""rssi":-65,"distance":5e-324"#, #""distance" is 5e-324; it must be at least 0.001 and at most 1000 m"#),
            (#""rssi":-65,"rxAdj":50.4,"distance":2"#, #""rxAdj" is 50.4; it must be within -50…50 dB"#),
            (#""rssi":-65,"rxAdj":-50.4,"distance":2"#, #""rxAdj" is -50.4; it must be within -50…50 dB"#),
        ]
        for (fields, reason) in refused {
            #expect(directory.receive(topic: topic, payload: payload(fields), at: now) == [.dropped("\(topic): \(reason)")], "\(fields)")
        }
        #expect(directory.readingsDropped == UInt64(refused.count) && directory.receivers.isEmpty)
        // The edges are what radios report: a beacond node's rssi_offset moves its rssi by rxAdj.
        let accepted = [
            #""rssi":-127,"rssi@1m":20,"distance":1000"#, #""rssi":20,"rssi@1m":-127,"distance":0.01"#,
            #""rssi":-135.4,"rxAdj":-10,"distance":2"#, #""rssi":30,"rxAdj":10,"distance":2"#,
        ]
        for fields in accepted {
            #expect(
                directory.receive(topic: topic, payload: payload(fields), at: now).last.map { input in
                    if case .sighting = input { true } else { false }
                } == true, "\(fields)")
        }
        #expect(directory.readingsDropped == UInt64(refused.count))
    }

    @Test func receiversAreBoundedAndTheBrokerLossTakesThemAllOffline() {
        var directory = ReceiverDirectory(ownRoom: "hall", capacity: 3)
        for room in 0..<10 {
            let time = Timestamp(microsecondsSinceEpoch: now.microsecondsSinceEpoch + Int64(room) * 1_000_000)
            _ = directory.receive(topic: "espresense/devices/\(deviceID)/room\(room)", payload: reading(), at: time)
        }
        // Each new room took the place of the one silent longest: the three heard last stay.
        #expect(directory.receivers.map(\.room).sorted() == ["room7", "room8", "room9"])
        #expect(directory.evicted == 7 && directory.readingsDropped == 0)
        #expect(Set(directory.brokerLost()) == Set(directory.receivers.map(\.id)))
        #expect(directory.brokerLost().isEmpty)
        #expect(directory.receivers.allSatisfy { !$0.online })
    }

    /// Issue 39: 1,200 invented rooms filled the 1,000-receiver table and later real receivers were dropped. A new
    /// room now evicts the receiver offline longest, else silent longest, never one the monitor needs (`holding`);
    /// the monitor is told which (`receiverForgotten`, before the new room's input), and evictions are counted.
    @Test func aFullTableEvictsTheOfflineOrSilentLongestButNeverOneHoldingARegion() {
        var directory = ReceiverDirectory(ownRoom: "hall", capacity: 3)
        func at(_ seconds: Int64) -> Timestamp { Timestamp(microsecondsSinceEpoch: now.microsecondsSinceEpoch + seconds * 1_000_000) }
        func read(_ room: String, at seconds: Int64) -> [ReceiverDirectory.Input] {
            directory.receive(topic: "espresense/devices/\(deviceID)/\(room)", payload: reading(), at: at(seconds))
        }
        _ = read("kitchen", at: 0)
        _ = read("garage", at: 1)
        _ = read("attic", at: 2)
        let kitchen = directory.receiver("kitchen")!.id
        let garage = directory.receiver("garage")!.id
        let attic = directory.receiver("attic")!.id
        // The attic goes offline: it goes first, though the kitchen is silent longer.
        _ = directory.receive(topic: "espresense/rooms/attic/status", payload: Array("offline".utf8), at: at(3))
        var inputs = read("stranger1", at: 4)
        #expect(inputs.first == .receiverForgotten(attic, room: "attic"), "\(inputs)")
        #expect(directory.receiver("attic") == nil && directory.receiver("stranger1") != nil)
        // All online: the silent longest, unless the monitor needs it (the kitchen holds a region inside).
        directory.holding = [kitchen]
        inputs = read("stranger2", at: 5)
        #expect(inputs.first == .receiverForgotten(garage, room: "garage"), "\(inputs)")
        #expect(directory.receiver("kitchen") != nil)
        // Every receiver holding: the new room's reading is dropped and counted, nobody is evicted.
        directory.holding = Set(directory.receivers.map(\.id))
        inputs = read("stranger3", at: 6)
        #expect(inputs.count == 1 && inputs.first.map { if case .dropped = $0 { true } else { false } } == true, "\(inputs)")
        #expect(directory.evicted == 2 && directory.readingsDropped == 1 && directory.receivers.count == 3)
        // The ids of evicted receivers are never reused.
        #expect(Set(directory.receivers.map(\.id)).isDisjoint(with: [attic, garage]))
    }

    @Test func aDroppedBridgeTakesEveryReceiverOfflineUntilHeardAgain() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        let bridge = "$SYS/broker/connection/bridge-site2/state"
        #expect(directory.receive(topic: bridge, payload: Array("1".utf8), at: now) == [.ignored])
        _ = directory.receive(topic: "espresense/rooms/kitchen/status", payload: Array("online".utf8), at: now)
        _ = directory.receive(topic: "espresense/rooms/garage/status", payload: Array("online".utf8), at: now)
        _ = directory.receive(topic: "espresense/rooms/attic/status", payload: Array("offline".utf8), at: now)
        // Down: both online receivers (which side of the bridge each is on cannot be known), not the offline one.
        #expect(
            directory.receive(topic: bridge, payload: Array("0".utf8), at: now)
                == [
                    .bridgeChanged(name: "bridge-site2", connected: false),
                    .receiverOffline(ReceiverID(rawValue: 1)), .receiverOffline(ReceiverID(rawValue: 2)),
                ])
        #expect(directory.bridgesDown == ["bridge-site2"])
        // Repeated (a retained 0 at resubscription): nothing new goes offline.
        #expect(
            directory.receive(topic: bridge, payload: Array("0".utf8), at: now)
                == [.bridgeChanged(name: "bridge-site2", connected: false)])
        // A receiver on this side is heard again with its next reading.
        #expect(
            directory.receive(topic: "espresense/devices/\(deviceID)/kitchen", payload: reading(), at: now)
                == [
                    .receiverOnline(ReceiverID(rawValue: 1)),
                    .sighting(identity, rssi: -70, distance: 2, by: ReceiverID(rawValue: 1), measuredPower: -59, exactRSSI: -70.4),
                ])
        #expect(directory.receive(topic: bridge, payload: Array("1".utf8), at: now) == [.bridgeChanged(name: "bridge-site2", connected: true)])
        #expect(directory.bridgesDown.isEmpty)
        // Beyond the bridge: its retained status crosses again.
        #expect(
            directory.receive(topic: "espresense/rooms/garage/status", payload: Array("online".utf8), at: now)
                == [.receiverOnline(ReceiverID(rawValue: 2))])
        // Not a bridge state: dropped with why; other $SYS topics are not a receiver's.
        #expect(
            directory.receive(topic: bridge, payload: Array("up".utf8), at: now) == [.dropped("\(bridge): bridge state \"up\" is neither 1 nor 0")])
        #expect(directory.receive(topic: "$SYS/broker/connection//state", payload: Array("0".utf8), at: now) == [.ignored])
        #expect(directory.receive(topic: "$SYS/broker/uptime", payload: Array("5 seconds".utf8), at: now) == [.ignored])
        #expect(directory.receivers.filter(\.online).count == 2)
    }

    @Test func bridgesDownAreBounded() {
        var directory = ReceiverDirectory(ownRoom: "hall", capacity: 3)
        for number in 0..<3 {
            #expect(
                directory.receive(topic: "$SYS/broker/connection/b\(number)/state", payload: Array("0".utf8), at: now)
                    == [.bridgeChanged(name: "b\(number)", connected: false)])
        }
        #expect(
            directory.receive(topic: "$SYS/broker/connection/b9/state", payload: Array("0".utf8), at: now)
                == [.dropped("$SYS/broker/connection/b9/state: more than 3 bridges down")])
        #expect(directory.bridgesDown.count == 3)
    }

    /// ESPresense nodes advertise themselves and report each other as `node:<id>`: what one hears of another is
    /// for calibration, and proof the listener is up.
    @Test func nodesHearingEachOtherAreReceiverHearings() {
        var directory = ReceiverDirectory(ownRoom: "hall")
        let kitchen = ReceiverID(rawValue: 1)
        #expect(
            directory.receive(topic: "espresense/devices/node:office/kitchen", payload: reading("node:office", rssi: -77.5), at: now)
                == [.receiverOnline(kitchen), .receiverHeard("office", rssi: -77.5, measuredPower: -59, by: kitchen)])
        #expect(
            directory.receive(topic: "espresense/devices/Node:hall/kitchen", payload: reading("node:hall", rssi: -70), at: now)
                == [.receiverHeard("hall", rssi: -70, measuredPower: -59, by: kitchen)])
        #expect(directory.receiver("kitchen")?.readings == 2)
        // A node hearing itself says nothing.
        #expect(directory.receive(topic: "espresense/devices/node:kitchen/kitchen", payload: reading("node:kitchen"), at: now) == [.ignored])
        // A node id no receiver could have, or a reading without RSSI: dropped and counted.
        let dropped = directory.readingsDropped
        _ = directory.receive(topic: "espresense/devices/node:Bad Id/kitchen", payload: reading("node:Bad Id"), at: now)
        let noRSSI = Array(ESPresenseReading(id: "node:office", rssiAtOneMetre: -59, distance: 2).json.utf8)
        _ = directory.receive(topic: "espresense/devices/node:office/kitchen", payload: noRSSI, at: now)
        #expect(directory.readingsDropped == dropped + 2)
        #expect(directory.lastDropped?.contains("without rssi") == true)
    }
}
