import BeaconKit
import BeacondAPI
import DBus
import Fleet

/// Admin1's fleet side: receivers' readings, and the MQTT keys of status.
extension DaemonObjects {
    /// `ListReceiverReadings`: every receiver's latest raw reading of every beacon heard in the last minute (empty
    /// without rooms), a page at a time: a large fleet's readings would not fit one reply. Only the page's
    /// entries are built.
    static func receiverReadings(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        guard let presence = daemon.core.engine.presence else { return page.reply([], total: 0) }
        let since = daemon.clock() - .seconds(60)
        var fresh: [(identity: BeaconIdentity, room: String, reading: RoomPresence.ReceiverReading)] = []
        let beacons = presence.latestReadings.keys.sorted { ($0.uuid.uuidString, $0.major, $0.minor) < ($1.uuid.uuidString, $1.major, $1.minor) }
        for identity in beacons {
            for (room, reading) in (presence.latestReadings[identity] ?? [:]).sorted(by: { $0.key < $1.key })
            where reading.time >= since {
                fresh.append((identity, room, reading))
            }
        }
        return page.reply(
            page.slice(fresh).map { identity, room, reading in
                .dictionary(
                    keySignature: "s", valueSignature: "v",
                    [
                        DBusDictionaryEntry(key: .string(BeacondReadingKey.uuid), value: .variant(.string(identity.uuid.uuidString))),
                        DBusDictionaryEntry(key: .string(BeacondReadingKey.major), value: .variant(.uint16(identity.major))),
                        DBusDictionaryEntry(key: .string(BeacondReadingKey.minor), value: .variant(.uint16(identity.minor))),
                        DBusDictionaryEntry(key: .string(BeacondReadingKey.receiver), value: .variant(.string(room))),
                        DBusDictionaryEntry(key: .string(BeacondReadingKey.rssi), value: .variant(.double(reading.rssi))),
                        DBusDictionaryEntry(
                            key: .string(BeacondReadingKey.measuredPower),
                            value: .variant(.int16(Int16(clamping: reading.measuredPower)))),
                        DBusDictionaryEntry(
                            key: .string(BeacondReadingKey.timestamp),
                            value: .variant(.uint64(UInt64(clamping: reading.time.microsecondsSinceEpoch)))),
                    ])
            }, total: fresh.count)
    }

    /// `GetStatus`'s MQTT keys: the node's, "off", or "failed" with why no node runs.
    static func mqttStatus(_ daemon: isolated BeaconDaemon) -> [String: DBusValue] {
        (daemon.mqttNode?.status ?? .withoutNode(broker: daemon.core.configuration.mqtt.broker, problem: daemon.core.mqttProblem)).statusEntries
    }
}
