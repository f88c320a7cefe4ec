package import BeaconKit
package import Fleet

/// The fleet's side of the engine: other receivers' readings and states go into it, its room locator follows the
/// node, and nothing in it waits for a receiver that can never be heard. Each change returns the engine's events for
/// the core to route.
extension FleetRooms {
    /// Another receiver's reading or status, for the engine: its sightings count for monitoring and ranging, and its
    /// going offline makes what only it heard unknown. Nil for an input that is not the engine's (nor the
    /// publisher's): ignored, dropped, a bridge's change.
    package mutating func take(
        _ input: ReceiverDirectory.Input, room: String?, _ engine: inout BeaconEngine, at now: Timestamp
    ) -> [BeaconEngine.Event]? {
        switch input {
        case .sighting(let identity, let rssi, let distance, let receiver, let measuredPower, let exactRSSI):
            learn(receiver, room)
            return engine.observe(
                identity, rssi: rssi, exactRSSI: exactRSSI, distance: distance, measuredPower: measuredPower,
                by: receiver, in: room, at: now)
        case .receiverHeard(let advertiser, let rssi, let measuredPower, let receiver):
            learn(receiver, room)
            if let room { engine.presence?.receiverHeard(advertiser, rssi: rssi, measuredPower: measuredPower, by: room, at: now) }
            return []
        case .receiverOffline(let receiver):
            learn(receiver, room)
            return engine.receiverWentOffline(receiver, at: now)
        case .receiverOnline(let receiver):
            learn(receiver, room)
            return engine.receiverCameOnline(receiver, at: now)
        case .receiverForgotten(let receiver, _):
            engine.forgetReceiver(receiver)
            forget(receiver)
            return []
        case .ignored, .dropped, .bridgeChanged:
            return nil
        }
    }

    /// A node was made for `[mqtt]` (or none: `[mqtt]` is off, or libmosquitto refused a setting): the engine emits
    /// this node's sightings if it publishes them, its rooms follow the node, and no region waits for a receiver no
    /// node will read.
    package mutating func started(
        _ start: FleetStart, configuration: DaemonConfiguration, _ engine: inout BeaconEngine, _ outbox: inout CoreOutbox
    ) -> [BeaconEngine.Event] {
        engine.emitsObservations = configuration.mqtt.publishes
        started(start)
        if let problem = start.problem { outbox.log(.error, "MQTT stays off: \(problem)") }
        let subscribes = configuration.mqtt.broker != nil && configuration.mqtt.subscribe
        var events: [BeaconEngine.Event] = []
        // No other receiver is read: nothing may wait for one.
        if !subscribes { events += Self.forgetOfflineReceivers(&engine, at: outbox.now) }
        configureRooms(configuration, &engine, &outbox)
        if subscribes {
            // A receiver the directory does not hold (this node's own room now, or no node) can never be heard
            // from: nothing may wait for it.
            let held = Set(start.receivers.map(\.id))
            for receiver in engine.offlineReceivers where !held.contains(receiver) {
                events += engine.receiverCameOnline(receiver, at: outbox.now)
            }
        }
        return events
    }

    /// Rooms follow the node: with one (its room is this receiver's), beacons are placed from every receiver's
    /// readings with `[rooms]` and `calibration.toml`; without, there are no rooms.
    package func configureRooms(_ configuration: DaemonConfiguration, _ engine: inout BeaconEngine, _ outbox: inout CoreOutbox) {
        guard let localRoom else {
            engine.presence = nil
            let roomed = engine.monitoredRegions.values.compactMap(\.region.room)
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
        if engine.presence == nil {
            engine.presence = RoomPresence(
                localRoom: localRoom, localRSSIOffset: configuration.mqtt.rssiOffset, calibrations: configuration.calibrations,
                measuredPower: configuration.measuredPowerOverrides, configuration: configuration.rooms, floorPlan: configuration.floorPlan)
        } else {
            engine.presence?.reconfigure(
                localRoom: localRoom, localRSSIOffset: configuration.mqtt.rssiOffset, calibrations: configuration.calibrations,
                measuredPower: configuration.measuredPowerOverrides, configuration: configuration.rooms, floorPlan: configuration.floorPlan)
        }
    }

    /// No other receiver is read any more (`[mqtt]` off, or `subscribe = false`): regions waiting for one get a
    /// full exit timeout from now, as after any blind period, instead of waiting for ever.
    package static func forgetOfflineReceivers(_ engine: inout BeaconEngine, at now: Timestamp) -> [BeaconEngine.Event] {
        var events: [BeaconEngine.Event] = []
        for receiver in engine.offlineReceivers { events += engine.receiverCameOnline(receiver, at: now) }
        return events
    }

    /// The receivers a new node starts with (`receiversForNewNode(carrying:offline:)`); empty when no other receiver
    /// is read.
    package func receiversForNewNode(
        carrying carried: [ReceiverDirectory.Receiver], configuration: DaemonConfiguration, engine: BeaconEngine
    ) -> [ReceiverDirectory.Receiver] {
        guard configuration.mqtt.broker != nil, configuration.mqtt.subscribe else { return [] }
        return receiversForNewNode(carrying: carried, offline: engine.offlineReceivers)
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
