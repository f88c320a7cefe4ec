import BeaconKit
import BeacondAPI
import DBus
import Fleet
import MQTT

/// The daemon's side of `[mqtt]`: the node is made, replaced and stopped only here.
extension BeaconDaemon {
    /// Connects to the broker when `[mqtt] broker` is set (at start, and on a reload that changed `[mqtt]`).
    /// A setting libmosquitto refuses (unreadable TLS files) is logged and leaves MQTT off until the next reload.
    func startMQTT() {
        engine.emitsObservations = configuration.mqtt.publishes
        guard let broker = configuration.mqtt.broker else { return }
        do throws(MQTTError) {
            let node = try MQTTNode(settings: configuration.mqtt, broker: broker, loop: loop, logger: logger)
            node.onFleetInput = { [unowned self] input in
                self.assumeIsolated { $0.fleetInput(input) }
            }
            mqttNode = node
            node.start()
        } catch {
            mqttProblem = "\(error)"
            logger.error("MQTT stays off: \(error)")
        }
    }

    /// Says `offline` and disconnects (shutdown, or before a reload's new settings take over).
    func stopMQTT() {
        mqttNode?.stop()
        mqttNode = nil
        mqttProblem = nil
        engine.emitsObservations = false
    }

    func mqttSettingsChanged(from old: MQTTSettings) {
        guard configuration.mqtt != old else { return }
        stopMQTT()
        startMQTT()
        updateScanning()
    }

    /// Another receiver's reading or status, for the engine: its sightings count for monitoring, and its going
    /// offline makes what only it heard unknown.
    func fleetInput(_ input: ReceiverDirectory.Input) {
        let now = clock()
        switch input {
        case .sighting(let identity, let rssi, let receiver):
            engineChanged(engine.observe(identity, rssi: rssi, by: receiver, at: now))
            scheduleLastSeenSave()
        case .receiverOffline(let receiver):
            engineChanged(engine.receiverWentOffline(receiver, at: now))
        case .receiverOnline(let receiver):
            engineChanged(engine.receiverCameOnline(receiver, at: now))
        case .ignored, .dropped:
            break
        }
    }

    /// This receiver's sighting, for the broker.
    func publishReading(_ observation: IBeaconObservation) {
        mqttNode?.observe(observation)
    }

    /// `GetStatus`'s MQTT keys: the node's, "off", or "failed" with why no node runs.
    var mqttStatus: [String: DBusValue] {
        if let mqttNode { return mqttNode.statusEntries }
        var entries = MQTTNode.offStatusEntries
        if let broker = configuration.mqtt.broker {
            entries[BeacondStatusKey.mqttBroker] = .string("\(broker)")
            entries[BeacondStatusKey.mqttState] = .string("failed")
            entries[BeacondStatusKey.mqttDetail] = .string(mqttProblem ?? "")
        }
        return entries
    }
}
