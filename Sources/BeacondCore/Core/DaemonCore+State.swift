package import BeaconKit
import Fleet
import BeacondAPI

/// Durable state as the core uses it: what the engine's regions are worth saving (`StatePersistence` decides when
/// and writes), and putting them back at start.
///
/// Sightings only move a region's last-seen time: that is saved every `lastSeenSaveInterval` while sightings arrive,
/// and at shutdown. After a restart the exit timing does not depend on it (see `restoreRegions`).
extension DaemonCore {
    /// Writes every pending change in one transaction, with the engine's current values of the regions marked
    /// changed (`StatePersistence.commit`).
    @discardableResult
    package mutating func commitState(_ durability: StateDurability = .processCrash, force: Bool = false) -> StateDatabaseError? {
        let keys = persistence.regionsToRead(force: force)
        let current = keys.isEmpty ? [:] : clients.regionValues(keys, rooms: fleet.rooms, exitTimeout: configuration.monitoring.exitTimeout)
        return persistence.commit(durability, force: force, current: current, &outbox)
    }

    /// Outside a commit (a watch event, GetStatus): recover or report a lost database now, not at the next change.
    package mutating func checkStateDatabase() {
        if case .commit(let force) = persistence.checkDatabase(&outbox) { commitState(force: force) }
    }

    /// While sightings arrive, one timer saves the regions' last-seen times; none runs while nothing is seen.
    package mutating func scheduleLastSeenSave() {
        guard !outbox.isArmed(.lastSeenSave), clients.engine.monitoredCount > 0 else { return }
        outbox.arm(.lastSeenSave, at: now + Self.lastSeenSaveInterval)
    }

    // MARK: Restart

    /// Puts back the regions saved before the restart (`ClientService.restore` says how), each app's first
    /// `max_regions_per_app` of them.
    package mutating func restoreRegions(at now: Timestamp) throws(StateDatabaseError) -> [DaemonEffect] {
        outbox.now = now
        let perApp = configuration.maxRegionsPerApp
        persistence.trimRegions(perApp: perApp, configFile: configuration.configFile, &outbox)
        let loaded = try persistence.loadRegions(perApp: perApp)
        for problem in loaded.problems { outbox.log(.warning, "\(persistence.file): \(problem)") }
        let highestClient = try persistence.highestStoredClient()
        let context = clientContext
        let (restored, receivers) = clients.restore(loaded.regions, highestClient: highestClient, context, &outbox, &persistence)
        // Offline until their status or a reading says otherwise (or `[mqtt]` turns out to be off).
        for (room, id) in receivers { fleet.learn(id, room) }
        guard restored > 0 else { return outbox.take() }
        let apps = clients.registry.appIDs.count
        outbox.log(
            .info,
            "resumed \(restored) monitored regions of \(apps) apps from \(persistence.file); "
                + "they are unknown until the scanner has looked for exit_timeout"
        )
        return outbox.take()
    }
}
