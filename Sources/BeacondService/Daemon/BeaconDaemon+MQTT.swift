import BeaconKit
import BeacondAPI
import DBus
import Fleet
import MQTT

/// The `[mqtt]` node: made, replaced and stopped only here; what it hears goes to the core.
extension BeaconDaemon {
    /// Connects to the broker when `[mqtt] broker` is set (at start, and on a reload that changed `[mqtt]`).
    /// A setting libmosquitto refuses (unreadable TLS files) is logged and leaves MQTT off until the next reload.
    func startMQTT(knownReceivers: [ReceiverDirectory.Receiver] = []) {
        let configuration = core.configuration
        var problem: String?
        if let broker = configuration.mqtt.broker {
            do throws(MQTTError) {
                let node = try MQTTNode(
                    settings: configuration.mqtt, broker: broker, loop: loop, logger: logger,
                    monitoring: DaemonCore.monitoringConfiguration(configuration), clock: clock,
                    knownReceivers: core.receiversForNewNode(carrying: knownReceivers))
                node.onFleetInput = { [unowned self] input in
                    self.assumeIsolated { daemon in
                        let room = input.receiver.flatMap { daemon.mqttNode?.directory.room(of: $0) }
                        daemon.run(.fleet(input, room: room))
                    }
                }
                node.roomOf = { [unowned self] identity in
                    self.assumeIsolated { $0.core.engine.presence?.placement(of: identity) ?? .unplaced }
                }
                node.distancesOf = { [unowned self] identity in
                    self.assumeIsolated { $0.core.engine.presence?.distances(of: identity, at: $0.clock()) ?? [:] }
                }
                mqttNode = node
                node.start()
            } catch {
                problem = "\(error)"
            }
        }
        run(.fleetStarted(FleetStart(room: mqttNode?.room, receivers: mqttNode?.directory.receivers ?? [], problem: problem)))
    }

    /// Says `offline` and disconnects (shutdown, or before a reload's new settings take over).
    func stopMQTT() {
        let receivers = mqttNode?.directory.receivers ?? []
        mqttNode?.stop()
        mqttNode = nil
        run(.fleetStopped(receivers: receivers))
    }

    /// `ListReceiverReadings`: every receiver's latest raw reading of every beacon heard in the last minute (empty
    /// without rooms), a page at a time: a large fleet's readings would not fit one reply. Only the page's
    /// entries are built.
    func receiverReadings(_ page: Page) -> [DBusValue] {
        guard let presence = core.engine.presence else { return page.reply([], total: 0) }
        let since = clock() - .seconds(60)
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
    var mqttStatus: [String: DBusValue] {
        (mqttNode?.status ?? .withoutNode(broker: core.configuration.mqtt.broker, problem: core.mqttProblem)).statusEntries
    }
}

extension ReceiverDirectory.Input {
    /// The receiver the input is about, if it is about one.
    var receiver: ReceiverID? {
        switch self {
        case .sighting(_, _, _, let receiver, _, _), .receiverOnline(let receiver), .receiverOffline(let receiver): receiver
        case .ignored, .dropped, .bridgeChanged: nil
        }
    }
}
