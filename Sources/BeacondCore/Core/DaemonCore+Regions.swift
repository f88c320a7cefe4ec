package import BeaconKit

/// "A client monitors a region": the client registry (`ClientRegistry`), the engine (`BeaconEngine`) and the saved
/// rows (`StateJournal`, then the state database) agree, region by region. These methods are the only ones that
/// change one region of one client in all three; every call, reload, authorization change and device key change
/// goes through them (a whole client leaves by `removeSession`, a restore resumes saved rows by `restoreRegions`,
/// a takeover moves them by `moveRegion`); likewise a ranged constraint leaves the engine and the registry by
/// `unrange`. `DaemonCoreRegionsInvariantTests` checks the three agree after every
/// input of randomized sequences. The Admin1 mirror (ListRegions, a client's MonitoredRegions) is read from the
/// registry when it is asked for, so it cannot disagree; callers say `clientPropertiesChanged` once per batch.
extension DaemonCore {
    /// The client monitors `region` from now on (one of the same identifier is replaced: the engine stops it
    /// first). Returns the engine's events, for `engineChanged`.
    package mutating func monitor(_ region: BeaconRegion, session: ClientSession) -> [EngineEvent] {
        clients.addRegion(region, to: session.number)
        let events = engine.startMonitoring(region, client: session.number, at: now)
        saveLater(.saveRegion(storedRegion(session, region)))
        return events
    }

    /// The client monitors the region no more. Returns the engine's events, for `engineChanged`.
    package mutating func unmonitor(_ identifier: String, client number: Int) -> [EngineEvent] {
        let events = engine.stopMonitoring(client: number, identifier: identifier, at: now)
        clients.removeRegion(identifier, from: number)
        saveLater(.removeRegion(client: number, identifier: identifier))
        return events
    }

    /// A detached client's region moves, with its state, to the app's new client `number` (a takeover).
    package mutating func moveRegion(_ region: BeaconRegion, appID: String, from old: Int, to number: Int) {
        guard let saved = engine.moveRegion(region.identifier, from: old, to: number) else { return }
        clients.addRegion(region, to: number)
        let heardBy = Self.storedHearing(
            engine.receiverRecord(for: .region(client: number, identifier: region.identifier)),
            rooms: receiverRooms(),
            exitTimeout: Self.monitoringConfiguration(configuration).exitTimeout)
        saveLater(.saveRegion(StoredRegion(client: number, appID: appID, monitored: saved, heardBy: heardBy)))
    }

    /// The client ranges `constraint` no more (nil: nothing any more): out of the engine while its ranging is
    /// active, and out of the registry. (A constraint enters the registry by `addRangedConstraint` and the engine
    /// by `refreshRanging`, the one place ranging is made active or paused.)
    package mutating func unrange(_ constraint: BeaconIdentityConstraint?, client number: Int) {
        guard let session = clients[number] else { return }
        if session.rangingActive { engine.stopRanging(constraint.map { [$0] } ?? session.rangedConstraints, client: number) }
        clients.removeRangedConstraint(constraint, from: number)
    }
}
