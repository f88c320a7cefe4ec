import BeaconKit
import BeacondAPI
import DBus
import Fleet
import MQTT

/// The daemon's side of `[mqtt]`: the node is made, replaced and stopped only here.
extension BeaconDaemon {
    /// Connects to the broker when `[mqtt] broker` is set (at start, and on a reload that changed `[mqtt]`).
    /// A setting libmosquitto refuses (unreadable TLS files) is logged and leaves MQTT off until the next reload.
    func startMQTT(knownReceivers: [ReceiverDirectory.Receiver] = []) {
        engine.emitsObservations = configuration.mqtt.publishes
        guard configuration.mqtt.broker != nil, configuration.mqtt.subscribe else {
            // No other receiver is read: nothing may wait for one.
            forgetOfflineReceivers()
            startNode(known: [])
            configureRooms()
            return
        }
        // The receivers' numbers and states carry over a reload, so a receiver still offline stays so. Rooms
        // numbered before (restored regions' receivers, an earlier node's) keep their numbers, offline until heard.
        let offline = engine.offlineReceivers
        var known: [ReceiverDirectory.Receiver] = knownReceivers.map { receiver in
            var receiver = receiver
            receiver.online = !offline.contains(receiver.id)
            return receiver
        }
        let carried = Set(known.map(\.id))
        for (id, room) in numberedRooms.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !carried.contains(id) {
            known.append(ReceiverDirectory.Receiver(room: room, id: id, online: false, lastReading: nil, readings: 0))
        }
        startNode(known: known)
        configureRooms()
        // A receiver the directory does not hold (this node's own room now, or no node) can never be heard from:
        // nothing may wait for it.
        let held = Set(mqttNode?.directory.receivers.map(\.id) ?? [])
        for receiver in engine.offlineReceivers where !held.contains(receiver) {
            engineChanged(engine.receiverCameOnline(receiver, at: clock()))
        }
    }

    private func startNode(known: [ReceiverDirectory.Receiver]) {
        guard let broker = configuration.mqtt.broker else { return }
        do throws(MQTTError) {
            let node = try MQTTNode(
                settings: configuration.mqtt, broker: broker, loop: loop, logger: logger,
                monitoring: Self.monitoringConfiguration(configuration), clock: clock,
                knownReceivers: known)
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

    /// Rooms follow the node: with one (its room is this receiver's), beacons are placed from every receiver's readings
    /// with `[rooms]` and `calibration.toml`; without, there are no rooms.
    func configureRooms() {
        guard let mqttNode else {
            engine.presence = nil
            let roomed = engine.monitoredRegions.values.compactMap(\.region.room)
            if !roomed.isEmpty {
                let rooms = Set(roomed).sorted().joined(separator: ", ")
                logger.warning(
                    """
                    \(roomed.count) monitored region(s) have a Room (\(rooms)) but there are no rooms \
                    without a running [mqtt] node: they cannot enter until MQTT runs again
                    """
                )
            }
            return
        }
        if engine.presence == nil {
            engine.presence = RoomPresence(
                localRoom: mqttNode.room, localRSSIOffset: configuration.mqtt.rssiOffset,
                calibrations: configuration.calibrations,
                measuredPower: configuration.measuredPowerOverrides, configuration: configuration.rooms)
        } else {
            engine.presence?.reconfigure(
                localRoom: mqttNode.room, localRSSIOffset: configuration.mqtt.rssiOffset,
                calibrations: configuration.calibrations,
                measuredPower: configuration.measuredPowerOverrides, configuration: configuration.rooms)
        }
        mqttNode.roomOf = { [unowned self] identity in self.assumeIsolated { $0.engine.presence?.placement(of: identity) ?? .unplaced } }
        mqttNode.distancesOf = { [unowned self] identity in
            self.assumeIsolated { $0.engine.presence?.distances(of: identity, at: $0.clock()) ?? [:] }
        }
    }

    /// Says `offline` and disconnects (shutdown, or before a reload's new settings take over).
    func stopMQTT() {
        for receiver in mqttNode?.directory.receivers ?? [] { numberedRooms[receiver.id] = receiver.room }
        mqttNode?.stop()
        mqttNode = nil
        mqttProblem = nil
        engine.emitsObservations = false
    }

    func mqttSettingsChanged(from old: MQTTSettings) {
        guard configuration.mqtt != old else { return }
        let known = mqttNode?.directory.receivers ?? []
        stopMQTT()
        startMQTT(knownReceivers: known)
        updateScanning()
    }

    /// No other receiver is read any more (`[mqtt]` off, or `subscribe = false`): regions waiting for one get a
    /// full exit timeout from now, as after any blind period, instead of waiting for ever.
    func forgetOfflineReceivers() {
        for receiver in engine.offlineReceivers {
            engineChanged(engine.receiverCameOnline(receiver, at: clock()))
        }
    }

    /// Another receiver's reading or status, for the engine: its sightings count for monitoring and ranging, and its
    /// going offline makes what only it heard unknown.
    func fleetInput(_ input: ReceiverDirectory.Input) {
        let now = clock()
        switch input {
        case .sighting(let identity, let rssi, let distance, let receiver, let measuredPower, let exactRSSI):
            let room = mqttNode?.directory.room(of: receiver)
            engineChanged(
                engine.observe(
                    identity, rssi: rssi, exactRSSI: exactRSSI, distance: distance, measuredPower: measuredPower,
                    by: receiver, in: room, at: now))
            scheduleLastSeenSave()
        case .receiverOffline(let receiver):
            engineChanged(engine.receiverWentOffline(receiver, at: now))
        case .receiverOnline(let receiver):
            engineChanged(engine.receiverCameOnline(receiver, at: now))
        case .ignored, .dropped, .bridgeChanged:
            break
        }
    }

    /// A ranged beacon with, while `[mqtt]` is on, where the room locator places it and every receiver's calibrated,
    /// smoothed distance from fresh readings by room.
    func report(_ beacon: RangedBeacon) -> RangedBeaconReport {
        guard mqttNode != nil, let presence = engine.presence else { return RangedBeaconReport(beacon: beacon, room: nil, receivers: [:]) }
        var room = ""
        if case .room(let name) = presence.placement(of: beacon.identity) { room = name }
        return RangedBeaconReport(beacon: beacon, room: room, receivers: presence.distances(of: beacon.identity, at: clock()))
    }

    /// `ListReceiverReadings`: every receiver's latest raw reading of every beacon heard in the last minute (empty
    /// without rooms), a page at a time: a large fleet's readings would not fit one reply. Only the page's
    /// entries are built.
    func receiverReadings(_ page: Page) -> [DBusValue] {
        guard let presence = engine.presence else { return page.reply([], total: 0) }
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

    /// This receiver's sighting, for the broker.
    func publishReading(_ observation: IBeaconObservation) {
        mqttNode?.observe(observation)
    }

    /// `GetStatus`'s MQTT keys: the node's, "off", or "failed" with why no node runs.
    var mqttStatus: [String: DBusValue] {
        (mqttNode?.status ?? .withoutNode(broker: configuration.mqtt.broker, problem: mqttProblem)).statusEntries
    }
}
