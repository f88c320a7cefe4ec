import BeaconKit
import Foundation
import BeacondAPI
import DBus
import Fleet
import BeacondCore

/// Admin1's fleet side: receivers' readings, and the MQTT keys of status.
extension ExportedObjects {
    /// `ListReceiverReadings`: every receiver's latest raw reading of every beacon heard in the last minute (empty
    /// without rooms), a page at a time: a large fleet's readings would not fit one reply. Only the page's
    /// entries are built.
    static func receiverReadings(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        let fresh = daemon.view.receiverReadings(since: daemon.clock() - .seconds(60))
        return page.reply(
            page.slice(fresh).map { constraint, room, reading in
                // The beacon's keys as a ranged beacon has them: an iBeacon's as before kinds, the others with Kind.
                var entries = BeaconDictionaries.constraintEntries(constraint)
                entries[BeacondReadingKey.receiver] = .string(room)
                entries[BeacondReadingKey.rssi] = .double(reading.rssi)
                entries[BeacondReadingKey.measuredPower] = .int16(Int16(clamping: reading.measuredPower))
                entries[BeacondReadingKey.timestamp] = .uint64(UInt64(clamping: reading.time.microsecondsSinceEpoch))
                return .vardict(entries)
            }, total: fresh.count)
    }

    /// `ListReceiverHearings`: what receivers heard of each other in the last minute (empty without rooms).
    static func receiverHearings(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        let fresh = daemon.view.receiverHearings(since: daemon.clock() - .seconds(60))
        return page.reply(
            page.slice(fresh).map { listener, advertiser, reading in
                .vardict([
                    BeacondHearingKey.receiver: .string(listener), BeacondHearingKey.heard: .string(advertiser),
                    BeacondHearingKey.rssi: .double(reading.rssi),
                    BeacondHearingKey.measuredPower: .int16(Int16(clamping: reading.measuredPower)),
                    BeacondHearingKey.timestamp: .uint64(UInt64(clamping: reading.time.microsecondsSinceEpoch)),
                ])
            }, total: fresh.count)
    }

    /// `GetFloorPlan`: the plan in force, for `beaconctl calibrate --at` and clients that draw it; empty without one.
    static func floorPlan(_ daemon: isolated BeaconDaemon) -> DBusValue {
        guard let plan = daemon.view.configuration.floorPlan else { return .vardict([:]) }
        return floorPlanDictionary(plan)
    }

    static func floorPlanDictionary(_ plan: FloorPlan) -> DBusValue {
        typealias Key = BeacondFloorPlanKey
        func numbers(_ values: [Double]) -> DBusValue { .array(elementSignature: "d", values.map { .double($0) }) }
        let floors = plan.floors.map { floor -> DBusValue in
            let extent = plan.extent(of: floor)
            var entries: [String: DBusValue] = [
                Key.id: .string(floor.id), Key.name: .string(floor.name), Key.tagHeight: .double(floor.tagHeight),
                Key.bounds: numbers([extent.minimum.x, extent.minimum.y, extent.maximum.x, extent.maximum.y]),
            ]
            if let heights = floor.heights { entries[Key.heights] = numbers([heights.lowerBound, heights.upperBound]) }
            return .vardict(entries)
        }
        let rooms = plan.rooms.map { room -> DBusValue in
            .vardict([
                Key.id: .string(room.id), Key.name: .string(room.name), Key.floor: .string(room.floor),
                Key.points: numbers(room.points.flatMap { [$0.x, $0.y] }),
            ])
        }
        let receivers = plan.receivers.map { receiver -> DBusValue in
            var entries: [String: DBusValue] = [
                Key.id: .string(receiver.id), Key.floor: .string(receiver.floor), Key.x: .double(receiver.x), Key.y: .double(receiver.y),
                Key.z: .double(receiver.z),
            ]
            if let calibration = receiver.calibration {
                entries[Key.rssiOffset] = .double(calibration.rssiOffset)
                entries[Key.pathLossExponent] = .double(calibration.pathLossExponent)
            }
            return .vardict(entries)
        }
        return .vardict([
            Key.floors: .array(elementSignature: "a{sv}", floors), Key.rooms: .array(elementSignature: "a{sv}", rooms),
            Key.receivers: .array(elementSignature: "a{sv}", receivers),
        ])
    }

    /// `GetStatus`'s MQTT keys: the node's, "off", or "failed" with why no node runs.
    static func mqttStatus(_ daemon: isolated BeaconDaemon) -> [String: DBusValue] {
        mqttNodeStatus(daemon).statusEntries
    }

    /// `ListReceivers`: the other receivers on the broker, a page at a time (up to 1,000 of them).
    static func receiverList(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        let receivers = mqttNodeStatus(daemon).receivers
        return page.reply(page.slice(receivers).map(MQTTNodeStatus.receiverEntry), total: receivers.count)
    }

    static func mqttNodeStatus(_ daemon: isolated BeaconDaemon) -> MQTTNodeStatus {
        daemon.resources.mqttNode?.status ?? .withoutNode(broker: daemon.view.configuration.mqtt.broker, problem: daemon.view.mqttProblem)
    }
}
