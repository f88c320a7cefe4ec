import BeaconKit
import BeacondAPI
import Fleet

/// Where the engine's events go: a monitoring event to its client (and its region marked for saving, and queued for
/// an absent Always app), a ranging result to a client whose ranging is active. This node's own sightings
/// (`.observation`) are the fleet's, not a client's: the core hands them to what it publishes.
extension ClientService {
    /// Delivers `events` in order. Hot: every advertisement's events pass here, so it takes the configuration and
    /// whether a node runs rather than a `Context`.
    package func route(
        _ events: [EngineEvent], configuration: DaemonConfiguration, nodeRuns: Bool, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) {
        for event in events {
            switch event {
            case .monitoring(let monitoring):
                deliver(monitoring, configuration: configuration, &outbox, &persistence, &delivery)
            case .ranging(let results, _):
                for result in results { deliver(result, nodeRuns: nodeRuns, &outbox) }
            case .observation:
                continue
            }
        }
    }

    private func deliver(
        _ event: MonitoringEvent<EngineKey>, configuration: DaemonConfiguration, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) {
        guard case .region(let client, _) = event.key, let session = registry[client] else { return }
        let info = EventInfo(at: event.timestamp)
        switch event.kind {
        case .didStartMonitoring:
            outbox.notify(session, .didStartMonitoring(event.region))
        case .didDetermineState(let state):
            persistence.markRegionChanged(event.key, &outbox)
            outbox.notify(session, .didDetermineState(state, event.region, info))
        case .didEnterRegion, .didExitRegion:
            let entered = if case .didEnterRegion = event.kind { true } else { false }
            persistence.markRegionChanged(event.key, &outbox)
            outbox.log(.info, "\(session.appID) \(entered ? "entered" : "exited") region \(event.region.identifier)", session.logMetadata)
            outbox.notify(session, entered ? .didEnterRegion(event.region, info) : .didExitRegion(event.region, info))
            if !session.isConnected {
                delivery.queue(entered ? .didEnterRegion : .didExitRegion, event, of: session, configuration: configuration, &persistence, &outbox)
            }
        }
    }

    private func deliver(_ result: RangingResult<EngineKey>, nodeRuns: Bool, _ outbox: inout CoreOutbox) {
        guard case .ranging(let client, _) = result.key, let session = registry[client], session.rangingActive else { return }
        let now = outbox.now
        outbox.emit(
            .range(
                ClientAddress(session), result.constraint,
                result.beacons.map { RangedBeaconReport($0, presence: nodeRuns ? engine.presence : nil, at: now) }))
    }
}

extension RangedBeaconReport {
    /// A ranged beacon with, while `[mqtt]` is on (`presence`), where the room locator places it and every
    /// receiver's calibrated, smoothed distance from fresh readings by room.
    init(_ beacon: RangedBeacon, presence: RoomPresence?, at now: Timestamp) {
        guard let presence else {
            self.init(beacon: beacon, room: nil, receivers: [:])
            return
        }
        var room = ""
        if case .room(let name) = presence.placement(of: beacon.identity) { room = name }
        self.init(
            beacon: beacon, room: room, receivers: presence.distances(of: beacon.identity, at: now), position: presence.position(of: beacon.identity))
    }
}
