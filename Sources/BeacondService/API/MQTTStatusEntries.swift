import BeaconKit
import BeacondAPI
import DBus
import Fleet
import BeacondCore

extension MQTTNodeStatus {
    /// `GetStatus`'s `MQTT*` keys (docs/dbus-api.md): every key always present, "" and 0 for what is not known.
    var statusEntries: [String: DBusValue] {
        let (state, detail): (String, String)
        switch connection {
        case .off: (state, detail) = ("off", "")
        case .failed(let problem): (state, detail) = ("failed", problem)
        case .stopped: (state, detail) = ("stopped", "")
        case .connecting: (state, detail) = ("connecting", "")
        case .connected: (state, detail) = ("connected", "")
        case .waiting(let reason): (state, detail) = ("waiting", reason)
        }
        return [
            BeacondStatusKey.mqttBroker: .string(broker.map { "\($0)" } ?? ""),
            BeacondStatusKey.mqttState: .string(state),
            BeacondStatusKey.mqttDetail: .string(detail),
            BeacondStatusKey.mqttRoom: .string(room),
            BeacondStatusKey.mqttReadingsPublished: .uint64(readingsPublished),
            BeacondStatusKey.mqttReadingsNotSent: .uint64(readingsNotSent),
            BeacondStatusKey.mqttRefused: .string(lastRefusal ?? ""),
            BeacondStatusKey.mqttReceiverCount: .uint32(UInt32(clamping: receivers.count)),
            BeacondStatusKey.mqttReceiversOnline: .uint32(UInt32(clamping: receivers.count(where: \.online))),
            BeacondStatusKey.mqttReadingsDropped: .uint64(readingsDropped),
            BeacondStatusKey.mqttLastDropped: .string(lastDropped ?? ""),
            BeacondStatusKey.mqttReceiversEvicted: .uint64(receiversEvicted),
        ]
    }

    /// A `ListReceivers` entry: one of the other receivers.
    static func receiverEntry(_ receiver: ReceiverDirectory.Receiver) -> DBusValue {
        .vardict([
            BeacondReceiverKey.room: .string(receiver.room),
            BeacondReceiverKey.online: .boolean(receiver.online),
            BeacondReceiverKey.lastReading: .uint64(UInt64(clamping: receiver.lastReading?.microsecondsSinceEpoch ?? 0)),
            BeacondReceiverKey.readings: .uint64(receiver.readings),
        ])
    }
}
