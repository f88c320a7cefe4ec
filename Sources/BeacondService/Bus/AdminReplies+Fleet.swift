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
