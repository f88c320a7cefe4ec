package import BeaconKit
import struct Foundation.UUID

/// The one `BeaconPipeline` that serves every client, and the only code that changes it. It speaks in clients,
/// regions and constraints; the engine keys (`EngineKey`) that tie its entries to clients stay inside. Every
/// change returns the events it caused, for the daemon to route; nothing here does I/O, and time is passed in.
package struct BeaconEngine {
    package typealias Event = BeaconPipeline<EngineKey>.Event

    private var pipeline: BeaconPipeline<EngineKey>
    /// When rooms last forgot beacons gone for ten minutes (a returning one is placed afresh by its first reading).
    private var roomsForgotten: Timestamp?

    package init(_ monitoring: MonitoringConfiguration) {
        pipeline = BeaconPipeline(monitoring: monitoring, emitsObservations: false)
    }

    // MARK: Sightings and time

    /// One scanner input: a raw HCI event, a link-layer PDU, or a frame bluetoothd already decoded.
    package mutating func ingest(_ input: ScannerInput, at now: Timestamp) -> [Event] {
        var events: [Event] = []
        switch input {
        case .packet(let packet, let bytes):
            pipeline.ingest(packet, payload: bytes.span, at: now, into: &events)
        case .advertisement(let content, let rssi, let address, let addressType):
            pipeline.ingest(content, rssi: rssi, address: address, addressType: addressType, at: now, into: &events)
        }
        forgetRooms(at: now)
        return events
    }

    // MARK: Remote receivers

    /// Another receiver's reading of `identity` (MQTT), from the receiver in `room`: it places the beacon (with rooms),
    /// counts for monitoring as a sighting of that receiver, and (placed) is ranged from the nearest receiver in cycles
    /// this adapter does not hear the beacon.
    package mutating func observe(
        _ identity: BeaconIdentity, rssi: Int8?, exactRSSI: Double? = nil, distance: Double? = nil, measuredPower: Int? = nil,
        by receiver: ReceiverID, in room: String? = nil, at now: Timestamp
    ) -> [Event] {
        var events: [Event] = []
        pipeline.advance(to: now, into: &events)
        forgetRooms(at: now)
        var placed = SightingRoom.unplaced
        if pipeline.presence != nil, let room {
            placed = pipeline.presence!.place(
                identity, rssi: exactRSSI ?? rssi.map(Double.init), advertisedPower: measuredPower,
                distance: distance.flatMap { $0 >= 0 ? $0 : nil }, by: receiver, in: room, at: now)
            pipeline.observeRemotely(identity, measuredPower: measuredPower, at: now)
        }
        var monitoring: [MonitoringEvent<EngineKey>] = []
        pipeline.monitor.observe(identity, rssi: rssi, by: receiver, in: room, room: placed, at: now, into: &monitoring)
        return events + monitoring.map { .monitoring($0) }
    }

    /// About once a minute, as readings arrive or time advances: beacons unheard for ten minutes leave the room tables,
    /// so a full table takes new beacons again.
    private mutating func forgetRooms(at now: Timestamp) {
        guard pipeline.presence != nil, now - (roomsForgotten ?? .epoch) >= .seconds(60) else { return }
        pipeline.presence?.forget(notHeardFor: .seconds(600), at: now)
        roomsForgotten = now
    }

    /// The private devices' keys (every app's and the administrator's): their resolvable private addresses become
    /// sightings of the devices.
    package mutating func setPrivateDeviceKeys(_ keys: [IdentityResolvingKey]) {
        let current = Set(pipeline.privateDevices.keys)
        guard Set(keys) != current else { return }
        pipeline.privateDevices.setKeys(keys)
    }

    /// calibration.toml's measured powers of private devices (phones), which advertise none of their own.
    package mutating func setPrivateDeviceMeasuredPower(_ overrides: [BeaconIdentity: Int]) {
        var powers: [UUID: Int8] = [:]
        for (identity, power) in overrides where identity.kind == .privateDevice {
            powers[identity.uuid] = Int8(clamping: power)
        }
        pipeline.privateDeviceMeasuredPower = powers
    }

    /// Rooms (with `[mqtt]`): where each beacon is, from this node's and the other receivers' readings.
    package var presence: RoomPresence? {
        get { pipeline.presence }
        set { pipeline.presence = newValue }
    }

    /// A remote receiver went offline: the regions only it heard lately become unknown, never outside.
    package mutating func receiverWentOffline(_ receiver: ReceiverID, at now: Timestamp) -> [Event] {
        pipeline.presence?.receiverWentOffline(receiver)
        var monitoring: [MonitoringEvent<EngineKey>] = []
        pipeline.monitor.receiverWentOffline(receiver, at: now, into: &monitoring)
        return monitoring.map { .monitoring($0) }
    }

    /// Receivers that may not be evicted from the receiver table: they keep regions inside, or blind ones wait.
    package var receiversHoldingRegions: Set<ReceiverID> { pipeline.monitor.receiversHoldingRegions }

    /// A receiver evicted from the full receiver table: the monitor and the room locator forget it.
    package mutating func forgetReceiver(_ receiver: ReceiverID) {
        pipeline.monitor.forgetReceiver(receiver)
        pipeline.presence?.receiverCameOnline(receiver) // not offline any more: gone, its readings age out
        pipeline.presence?.forgetReceiverName(receiver)
    }

    /// Remote receivers the monitor counts as offline.
    package var offlineReceivers: Set<ReceiverID> { pipeline.monitor.offlineReceivers }

    /// A remote receiver is back: what waited for it gets a full exit timeout.
    package mutating func receiverCameOnline(_ receiver: ReceiverID, at now: Timestamp) -> [Event] {
        pipeline.presence?.receiverCameOnline(receiver)
        var monitoring: [MonitoringEvent<EngineKey>] = []
        pipeline.monitor.receiverCameOnline(receiver, at: now, into: &monitoring)
        return monitoring.map { .monitoring($0) }
    }

    /// Everything due by `now`: exits whose timeout passed, ranging cycles.
    package mutating func advance(to now: Timestamp) -> [Event] {
        var events: [Event] = []
        pipeline.advance(to: now, into: &events)
        forgetRooms(at: now)
        return events
    }

    /// Whether every sighting is also returned as an `.observation` event (for an MQTT node that publishes them).
    package var emitsObservations: Bool {
        get { pipeline.emitsObservations }
        set { pipeline.emitsObservations = newValue }
    }

    /// When `advance` next has something to do; nil while nothing is monitored or ranged.
    /// Mutating only so the daemon's engine is read in place: as a getter, every call (one per remote reading)
    /// would copy the whole engine out of the actor and release it again.
    package mutating func nextDeadline() -> Timestamp? { pipeline.nextDeadline }

    /// Someone monitors or ranges, so the scanner should run.
    /// The keys being ranged (a client's constraints while its ranging is active).
    package var rangedKeys: [EngineKey] { pipeline.ranger.rangedKeys }

    package var needsScanning: Bool { pipeline.monitor.count > 0 || !pipeline.ranger.rangedKeys.isEmpty }

    /// Nothing can be seen (no scanner, adapter gone, restart): regions become unknown instead of exiting.
    package mutating func suspendDetection(at now: Timestamp) -> [Event] {
        var events: [MonitoringEvent<EngineKey>] = []
        pipeline.monitor.suspendDetection(at: now, into: &events)
        return events.map { .monitoring($0) }
    }

    /// The scanner sees again: each region gets a full exit timeout from now.
    package mutating func resumeDetection(at now: Timestamp) {
        pipeline.monitor.resumeDetection(at: now)
    }

    // MARK: Monitoring

    package var monitoredCount: Int { pipeline.monitor.count }

    package func monitoredRegion(client: Int, identifier: String) -> MonitoredRegion? {
        pipeline.monitor.monitoredRegion(for: .region(client: client, identifier: identifier))
    }

    /// Every monitored region by its key, to save last-seen times.
    package var monitoredRegions: [EngineKey: MonitoredRegion] { pipeline.monitor.regions }

    /// Starts monitoring `region` for the client; a region it monitors under the same identifier is replaced, as
    /// in Core Location.
    package mutating func startMonitoring(_ region: BeaconRegion, client: Int, at now: Timestamp) -> [Event] {
        let key = EngineKey.region(client: client, identifier: region.identifier)
        var events: [Event] = []
        if pipeline.monitor.monitoredRegion(for: key) != nil {
            var replaced: [MonitoringEvent<EngineKey>] = []
            _ = pipeline.monitor.stopMonitoring(key, at: now, into: &replaced)
            events += replaced.map { .monitoring($0) }
        }
        pipeline.startMonitoring(region, key: key, at: now, into: &events)
        return events
    }

    package mutating func stopMonitoring(client: Int, identifier: String, at now: Timestamp) -> [Event] {
        var events: [MonitoringEvent<EngineKey>] = []
        _ = pipeline.monitor.stopMonitoring(.region(client: client, identifier: identifier), at: now, into: &events)
        return events.map { .monitoring($0) }
    }

    /// `RequestState`: what fell due first, then the region's state as a `DidDetermineState`.
    package mutating func requestState(client: Int, identifier: String, at now: Timestamp) -> [Event] {
        let due = advance(to: now)
        var determined: [MonitoringEvent<EngineKey>] = []
        pipeline.monitor.requestState(for: .region(client: client, identifier: identifier), at: now, into: &determined)
        return due + determined.map { .monitoring($0) }
    }

    /// A takeover: the region moves to another client exactly as it is (state, last sighting, pending exit).
    /// Returns it, or nil if the old client did not monitor it.
    package mutating func moveRegion(_ identifier: String, from old: Int, to new: Int) -> MonitoredRegion? {
        let oldKey = EngineKey.region(client: old, identifier: identifier)
        guard let saved = pipeline.monitor.monitoredRegion(for: oldKey),
            pipeline.monitor.rekey(oldKey, to: .region(client: new, identifier: identifier))
        else { return nil }
        return saved
    }

    /// A region saved before a restart or a rebuild, put back without events.
    package mutating func restore(_ monitored: MonitoredRegion, client: Int, at now: Timestamp) {
        pipeline.monitor.restore(monitored, for: .region(client: client, identifier: monitored.region.identifier), at: now)
    }

    /// Who heard a region lately, saved before a restart (after `restore`): receivers in `offline` are offline
    /// until they are heard from, so a region only they heard waits for them instead of exiting.
    package mutating func restoreReceivers(_ record: ReceiverRecord, client: Int, identifier: String, offline: Set<ReceiverID>) {
        pipeline.monitor.restoreReceivers(record, for: .region(client: client, identifier: identifier), offline: offline)
    }

    package func receiverRecord(for key: EngineKey) -> ReceiverRecord? { pipeline.monitor.receiverRecord(for: key) }

    // MARK: Ranging

    /// Starts each constraint the client does not range yet.
    package mutating func startRanging(_ constraints: [BeaconIdentityConstraint], client: Int, at now: Timestamp) -> [Event] {
        let running = Set(pipeline.ranger.rangedKeys)
        var events: [Event] = []
        for constraint in constraints where !running.contains(.ranging(client: client, constraint: constraint)) {
            pipeline.startRanging(constraint, key: .ranging(client: client, constraint: constraint), at: now, into: &events)
        }
        return events
    }

    package mutating func stopRanging(_ constraints: [BeaconIdentityConstraint], client: Int) {
        for constraint in constraints { pipeline.stopRanging(.ranging(client: client, constraint: constraint)) }
    }

    // MARK: Whole clients and reconfiguration

    /// Takes out everything of a client: its regions (in the order given) and its ranging.
    package mutating func remove(
        client: Int, regions identifiers: [String], ranging constraints: [BeaconIdentityConstraint],
        at now: Timestamp
    ) -> [Event] {
        var events: [Event] = []
        for identifier in identifiers { events += stopMonitoring(client: client, identifier: identifier, at: now) }
        stopRanging(constraints, client: client)
        return events
    }

    /// A new monitoring configuration (exit timeout, hysteresis): a fresh pipeline with every region in its
    /// current state and still blind if it was, and the given ranging started again. Returns what fell due before
    /// the change (for the old configuration's clients) and what the restarted ranging produced.
    package mutating func reconfigure(
        _ monitoring: MonitoringConfiguration, ranging: [(client: Int, constraints: [BeaconIdentityConstraint])],
        at now: Timestamp
    ) -> (due: [Event], restarted: [Event]) {
        let due = advance(to: now)
        let saved = pipeline.monitor.regions
        let blind = pipeline.monitor.isDetectionSuspended
        let offline = pipeline.monitor.offlineReceivers
        var fresh = BeaconEngine(monitoring)
        fresh.emitsObservations = emitsObservations
        fresh.presence = presence
        fresh.pipeline.privateDevices = pipeline.privateDevices
        if blind {
            // Still blind (after a restart, or the adapter gone): the new monitor must not time regions out. It
            // goes blind before the regions are put back, so none is timed from its last sighting (an exit that
            // would fire here has nobody to go to and would be lost).
            _ = fresh.suspendDetection(at: now)
        }
        for (key, region) in saved {
            fresh.pipeline.monitor.restore(region, for: key, at: now)
            // Who heard it, and a wait for an offline receiver, survive the rebuild.
            if let record = pipeline.monitor.receiverRecord(for: key) {
                fresh.pipeline.monitor.restoreReceivers(record, for: key, offline: offline)
            }
        }
        self = fresh
        var restarted: [Event] = []
        for (client, constraints) in ranging { restarted += startRanging(constraints, client: client, at: now) }
        return (due, restarted)
    }
}
