import BeaconKit
import BeacondAPI
package import Fleet

/// The core's side of `[mqtt]`: other receivers' readings and states for the engine, rooms while a node runs, and
/// the receivers a new node must know. The node itself (the broker connection) is the daemon's.
extension DaemonCore {
    /// The receivers a new node starts with: those carried over from the node it replaces, and every room numbered
    /// before (restored regions' receivers, an earlier node's), each offline until heard if the engine says so.
    /// Their numbers and states carry over a reload, so a receiver still offline stays so. Empty when no other
    /// receiver is read.
    package func receiversForNewNode(carrying carried: [ReceiverDirectory.Receiver]) -> [ReceiverDirectory.Receiver] {
        guard configuration.mqtt.broker != nil, configuration.mqtt.subscribe else { return [] }
        return fleet.receiversForNewNode(carrying: carried, offline: clients.engine.offlineReceivers)
    }

    /// A node was made for `[mqtt]` (or none: `[mqtt]` is off, or libmosquitto refused a setting).
    package mutating func fleetStarted(_ start: FleetStart) {
        clients.engine.emitsObservations = configuration.mqtt.publishes
        fleet.started(start)
        startPublishing()
        if let problem = start.problem { outbox.log(.error, "MQTT stays off: \(problem)") }
        let subscribes = configuration.mqtt.broker != nil && configuration.mqtt.subscribe
        // No other receiver is read: nothing may wait for one.
        if !subscribes { forgetOfflineReceivers() }
        configureRooms()
        if subscribes {
            // A receiver the directory does not hold (this node's own room now, or no node) can never be heard
            // from: nothing may wait for it.
            let held = Set(start.receivers.map(\.id))
            for receiver in clients.engine.offlineReceivers where !held.contains(receiver) {
                engineChanged(clients.engine.receiverCameOnline(receiver, at: now))
            }
        }
        updateScanning()
    }

    /// The node said `offline` and disconnected (shutdown, or before a reload's new settings take over).
    package mutating func fleetStopped(receivers: [ReceiverDirectory.Receiver]) {
        fleet.stopped(receivers: receivers)
        publishing.stop()
        outbox.cancel(.homeAssistant)
        clients.engine.emitsObservations = false
    }

    /// Rooms follow the node: with one (its room is this receiver's), beacons are placed from every receiver's
    /// readings with `[rooms]` and `calibration.toml`; without, there are no rooms.
    package mutating func configureRooms() {
        guard let fleetRoom = fleet.localRoom else {
            clients.engine.presence = nil
            let roomed = clients.engine.monitoredRegions.values.compactMap(\.region.room)
            if !roomed.isEmpty {
                let rooms = Set(roomed).sorted().joined(separator: ", ")
                outbox.log(
                    .warning,
                    """
                    \(roomed.count) monitored region(s) have a Room (\(rooms)) but there are no rooms \
                    without a running [mqtt] node: they cannot enter until MQTT runs again
                    """)
            }
            return
        }
        if clients.engine.presence == nil {
            clients.engine.presence = RoomPresence(
                localRoom: fleetRoom, localRSSIOffset: configuration.mqtt.rssiOffset,
                calibrations: configuration.calibrations,
                measuredPower: configuration.measuredPowerOverrides, configuration: configuration.rooms)
        } else {
            clients.engine.presence?.reconfigure(
                localRoom: fleetRoom, localRSSIOffset: configuration.mqtt.rssiOffset,
                calibrations: configuration.calibrations,
                measuredPower: configuration.measuredPowerOverrides, configuration: configuration.rooms)
        }
    }

    /// No other receiver is read any more (`[mqtt]` off, or `subscribe = false`): regions waiting for one get a
    /// full exit timeout from now, as after any blind period, instead of waiting for ever.
    package mutating func forgetOfflineReceivers() {
        for receiver in clients.engine.offlineReceivers {
            engineChanged(clients.engine.receiverCameOnline(receiver, at: now))
        }
    }

    /// Another receiver's reading or status, for the engine: its sightings count for monitoring and ranging, and its
    /// going offline makes what only it heard unknown.
    package mutating func fleet(_ input: ReceiverDirectory.Input, room: String?) {
        switch input {
        case .sighting(let identity, let rssi, let distance, let receiver, let measuredPower, let exactRSSI):
            fleet.learn(receiver, room)
            engineChanged(
                clients.engine.observe(
                    identity, rssi: rssi, exactRSSI: exactRSSI, distance: distance, measuredPower: measuredPower,
                    by: receiver, in: room, at: now))
            scheduleLastSeenSave()
        case .receiverOffline(let receiver):
            fleet.learn(receiver, room)
            engineChanged(clients.engine.receiverWentOffline(receiver, at: now))
        case .receiverOnline(let receiver):
            fleet.learn(receiver, room)
            engineChanged(clients.engine.receiverCameOnline(receiver, at: now))
        case .receiverForgotten(let receiver, _):
            clients.engine.forgetReceiver(receiver)
            fleet.forget(receiver)
        case .ignored, .dropped, .bridgeChanged:
            return
        }
        // After the engine placed the reading, so the tracker published carries the room it gives.
        updatePublishing { [now] publishing, placement in publishing.fleetInput(input, at: now, placement: placement) }
    }
}

/// What became of `[mqtt]` when the daemon made its node.
package struct FleetStart {
    /// The node's room (this receiver's); nil when no node runs.
    package var room: String?
    /// The receivers the node's directory holds.
    package var receivers: [ReceiverDirectory.Receiver]
    /// Why no node runs though `[mqtt] broker` is set.
    package var problem: String?

    package init(room: String?, receivers: [ReceiverDirectory.Receiver], problem: String?) {
        self.room = room
        self.receivers = receivers
        self.problem = problem
    }
}
