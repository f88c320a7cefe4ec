import BeaconKit
import BeacondAPI
import DBus
import Fleet
import MQTT
import BeacondCore

/// The `[mqtt]` node: made, replaced and stopped only here; what it hears goes to the core.
extension BeaconDaemon {
    /// Connects to the broker when `[mqtt] broker` is set (at start, and on a reload that changed `[mqtt]`).
    /// A setting libmosquitto refuses (unreadable TLS files) is logged and leaves MQTT off until the next reload.
    /// Returns what the core is told; the node connects from the loop, once this input has been handled (a broker
    /// that refuses at once is news to a core that knows the node).
    func startMQTT(knownReceivers: [ReceiverDirectory.Receiver] = []) -> DaemonInput {
        let configuration = view.configuration
        var problem: String?
        if let broker = configuration.mqtt.broker {
            do throws(MQTTError) {
                let node = try MQTTNode(
                    settings: configuration.mqtt, broker: broker, loop: loop, logger: logger, clock: clock,
                    knownReceivers: view.receiversForNewNode(carrying: knownReceivers))
                node.hooks.onFleetInput = { [unowned self] input in
                    self.assumeIsolated { daemon in
                        let room = input.receiver.flatMap { daemon.resources.mqttNode?.directory.room(of: $0) }
                        daemon.run(.fleet(input, room: room))
                    }
                }
                // Asked only while the receiver table is full: who may not be evicted for a new room.
                node.hooks.receiversHoldingRegions = { [unowned self] in
                    self.assumeIsolated { $0.view.receiversHoldingRegions }
                }
                node.hooks.onConnectionChange = { [unowned self] connected in self.receive(.fleetConnection(connected)) }
                resources.mqttNode = node
                // Started from the loop: libmosquitto may fail a connection at once, and the callback must not
                // reach the daemon while it carries out effects. A node replaced before then is stopped already.
                let made = ObjectIdentifier(node)
                loop.execute {
                    self.assumeIsolated { daemon in
                        if let current = daemon.resources.mqttNode, ObjectIdentifier(current) == made { current.start() }
                    }
                }
            } catch {
                problem = "\(error)"
            }
        }
        return .fleetStarted(FleetStart(room: resources.mqttNode?.room, receivers: resources.mqttNode?.directory.receivers ?? [], problem: problem))
    }

    /// Says `offline` and disconnects (shutdown, or before a reload's new settings take over); returns what the core
    /// is told.
    func stopMQTT() -> DaemonInput {
        let receivers = resources.mqttNode?.directory.receivers ?? []
        resources.mqttNode?.stop()
        resources.mqttNode = nil
        return .fleetStopped(receivers: receivers)
    }
}

extension ReceiverDirectory.Input {
    /// The receiver the input is about, if it is about one.
    var receiver: ReceiverID? {
        switch self {
        case .sighting(_, _, _, let receiver, _, _), .receiverHeard(_, _, _, let receiver), .receiverOnline(let receiver),
            .receiverOffline(let receiver),
            .receiverForgotten(let receiver, _):
            receiver
        case .ignored, .dropped, .bridgeChanged: nil
        }
    }
}
