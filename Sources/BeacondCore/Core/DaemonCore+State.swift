package import BeaconKit
import Fleet
import BeacondAPI

/// Durable state as the core uses it: what the engine's regions are worth saving (`StatePersistence` decides when
/// and writes), and putting them back at start.
///
/// Sightings only move a region's last-seen time: that is saved every `lastSeenSaveInterval` while sightings arrive,
/// and at shutdown. After a restart the exit timing does not depend on it (see `restoreRegions`).
extension DaemonCore {
    package mutating func saveLater(_ change: StateChange) {
        persistence.saveLater(change, &outbox)
    }

    /// Writes every pending change in one transaction, with the engine's current values of the regions marked
    /// changed (`StatePersistence.commit`).
    @discardableResult
    package mutating func commitState(_ durability: StateDurability = .processCrash, force: Bool = false) -> StateDatabaseError? {
        var current: [EngineKey: StateJournal.RegionValues] = [:]
        let keys = persistence.regionsToRead(force: force)
        if !keys.isEmpty {
            let rooms = fleet.rooms
            let exitTimeout = Self.monitoringConfiguration(configuration).exitTimeout
            let engine = clients.engine
            for key in keys {
                guard let monitored = engine.monitoredRegion(for: key) else { continue }
                current[key] = StateJournal.RegionValues(
                    monitored: monitored, heardBy: StoredHearing.of(engine.receiverRecord(for: key), rooms: rooms, exitTimeout: exitTimeout))
            }
        }
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

    package mutating func markSeenRegionsChanged() {
        persistence.markRegionsChanged(clients.engine.monitoredRegions.lazy.filter { $0.value.lastSeen != nil }.map(\.key))
    }

    // MARK: Restart

    /// Puts back the regions saved before the restart (`ClientService.restore` says how), each app's first
    /// `max_regions_per_app` of them.
    package mutating func restoreRegions(at now: Timestamp) throws(StateDatabaseError) -> [DaemonEffect] {
        outbox.now = now
        // A bounded state, whatever the file holds: each app's first max_regions_per_app saved regions resume, the
        // rest are removed, and said (a file from before the limit, or a limit lowered since).
        let perApp = configuration.maxRegionsPerApp
        do {
            for (appID, count) in try persistence.trimRegions(perApp: perApp).sorted(by: { $0.key < $1.key }) {
                let file = configuration.configFile
                outbox.log(
                    .warning,
                    """
                    \(count) saved regions of \(appID) removed: beyond max_regions_per_app = \(perApp) in \(file) \
                    (its first \(perApp) saved regions resume); raise the limit before a restart to keep more
                    """
                )
            }
        } catch {
            outbox.log(.error, "\(error); only the first \(perApp) saved regions of each app resume, the others stay in the file")
        }
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
