package import BeaconKit

/// "A client monitors a region": the client registry (`ClientRegistry`), the engine (`BeaconEngine`) and the saved
/// rows (`StatePersistence`, then the state database) agree, region by region. These methods are the only ones that
/// change one region of one client in all three; every call, reload, authorization change and device key change
/// goes through them (a whole client leaves by `removeSession`, a restore resumes saved rows by `restore`, a takeover
/// moves them by `moveRegion`); likewise a ranged constraint leaves the engine and the registry by `unrange`.
/// `DaemonCoreRegionsInvariantTests` checks the three agree after every input of randomized sequences. The Admin1
/// mirror (ListRegions, a client's MonitoredRegions) is read from the registry when it is asked for, so it cannot
/// disagree; callers say `propertiesChanged` once per batch.
extension ClientService {
    package typealias EngineEvent = BeaconEngine.Event

    /// The client monitors `region` from now on (one of the same identifier is replaced: the engine stops it
    /// first). Returns the engine's events, for `route`.
    package mutating func monitor(
        _ region: BeaconRegion, session: ClientSession, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence
    ) -> [EngineEvent] {
        registry.addRegion(region, to: session.number)
        let events = engine.startMonitoring(region, client: session.number, at: outbox.now)
        persistence.saveLater(.saveRegion(storedRegion(session, region)), &outbox)
        return events
    }

    /// The client monitors the region no more. Returns the engine's events, for `route`.
    package mutating func unmonitor(
        _ identifier: String, client number: Int, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence
    ) -> [EngineEvent] {
        let events = engine.stopMonitoring(client: number, identifier: identifier, at: outbox.now)
        registry.removeRegion(identifier, from: number)
        persistence.saveLater(.removeRegion(client: number, identifier: identifier), &outbox)
        return events
    }

    /// A detached client's region moves, with its state, to the app's new client `number` (a takeover).
    package mutating func moveRegion(
        _ region: BeaconRegion, appID: String, from old: Int, to number: Int, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence
    ) {
        guard let saved = engine.moveRegion(region.identifier, from: old, to: number) else { return }
        registry.addRegion(region, to: number)
        let heardBy = StoredHearing.of(
            engine.receiverRecord(for: .region(client: number, identifier: region.identifier)), rooms: context.fleet.rooms,
            exitTimeout: context.exitTimeout)
        persistence.saveLater(.saveRegion(StoredRegion(client: number, appID: appID, monitored: saved, heardBy: heardBy)), &outbox)
    }

    /// The client ranges `constraint` no more (nil: nothing any more): out of the engine while its ranging is
    /// active, and out of the registry. (A constraint enters the registry by `addRangedConstraint` and the engine
    /// by `refreshRanging`, the one place ranging is made active or paused.)
    package mutating func unrange(_ constraint: BeaconIdentityConstraint?, client number: Int) {
        guard let session = registry[number] else { return }
        if session.rangingActive { engine.stopRanging(constraint.map { [$0] } ?? session.rangedConstraints, client: number) }
        registry.removeRangedConstraint(constraint, from: number)
    }

    /// The region's row as it is now: its state in the engine, or unknown before the engine has it.
    package func storedRegion(_ session: ClientSession, _ region: BeaconRegion) -> StoredRegion {
        let monitored =
            engine.monitoredRegion(client: session.number, identifier: region.identifier)
            ?? MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown)
        return StoredRegion(client: session.number, appID: session.appID, monitored: monitored)
    }

    /// The values of the regions `keys` as the engine has them now, for a commit (`StatePersistence.regionsToRead`):
    /// each with its hearings by room (`rooms`), those older than `exitTimeout` before the latest left out.
    package func regionValues(_ keys: Set<EngineKey>, rooms: [ReceiverID: String], exitTimeout: Duration)
        -> [EngineKey: StateJournal.RegionValues]
    {
        var values: [EngineKey: StateJournal.RegionValues] = [:]
        for key in keys {
            guard case .region(let client, let identifier) = key,
                let monitored = engine.monitoredRegion(client: client, identifier: identifier)
            else { continue }
            values[key] = StateJournal.RegionValues(
                monitored: monitored, heardBy: StoredHearing.of(engine.receiverRecord(for: key), rooms: rooms, exitTimeout: exitTimeout))
        }
        return values
    }

    /// Every region seen at least once (its last-seen time is worth saving).
    package var seenRegions: some Sequence<EngineKey> {
        engine.monitoredRegions.lazy.filter { $0.value.lastSeen != nil }.map(\.key)
    }

    /// The client ranges `constraint` too (into the engine by `refreshRanging`, which says whether it may now).
    package mutating func range(_ constraint: BeaconIdentityConstraint, client number: Int) {
        registry.addRangedConstraint(constraint, to: number)
    }

    /// RequestState: the engine's answer, for `route`.
    package mutating func requestState(client number: Int, identifier: String, at now: Timestamp) -> [EngineEvent] {
        engine.requestState(client: number, identifier: identifier, at: now)
    }

    // MARK: Ranging, active or paused

    /// Puts the client's ranging into the engine or takes it out, by what its status allows now: WhenInUse
    /// clients range only while in use (paused otherwise, resumed by `SetInUse(true)`).
    package mutating func refreshRanging(
        _ number: Int, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard let session = registry[number] else { return }
        let allowed =
            session.isConnected && !session.rangedConstraints.isEmpty
            && AuthorizationRules.rangingPermission(context.record(session.appID), context.policy).allows(inUse: session.inUse)
        if allowed {
            // Every constraint not yet in the engine: all of them when ranging resumes, the new one when a
            // client that already ranges adds another.
            let events = engine.startRanging(session.rangedConstraints, client: number, at: outbox.now)
            registry.setRangingActive(true, for: number)
            route(events, context, &outbox, &persistence, &delivery)
        } else if session.rangingActive {
            engine.stopRanging(session.rangedConstraints, client: number)
            registry.setRangingActive(false, for: number)
            if !session.rangedConstraints.isEmpty, session.isConnected {
                outbox.log(
                    .info, "ranging of \(session.path) paused: \(session.appID) is authorizedWhenInUse and the client is not in use",
                    session.logMetadata)
            }
        }
    }

    package mutating func setInUse(
        client number: Int, _ inUse: Bool, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard let session = registry[number], session.inUse != inUse else { return }
        registry.setInUse(inUse, for: number)
        propertiesChanged(number, [.inUse], context, &outbox)
        refreshRanging(number, context, &outbox, &persistence, &delivery)
    }

    // MARK: The engine

    /// A new exit timeout: a fresh pipeline with every region restored in its current state (no events).
    package mutating func reconfigureEngine(
        _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) {
        let configuration = context.configuration
        let ranging = registry.all.filter(\.rangingActive).map { (client: $0.number, constraints: $0.rangedConstraints) }
        let (due, restarted) = engine.reconfigure(configuration.monitoring, ranging: ranging, at: outbox.now)
        // What fell due under the old configuration goes out first.
        route(due, context, &outbox, &persistence, &delivery)
        let hysteresis =
            configuration.hysteresis.map {
                ", RSSI hysteresis: enter at or above \($0.enterAtOrAbove) dBm, absent below \($0.absentBelow) dBm"
            } ?? ""
        outbox.log(.info, "exit timeout is now \(configuration.exitTimeout)\(hysteresis)")
        route(restarted, context, &outbox, &persistence, &delivery)
    }
}
