package import BeaconKit
import Fleet
import BeacondAPI

/// Durable state: what is saved when, and putting it back at start.
///
/// - A D-Bus method's changes are committed and fsynced before its reply leaves (`answer`, with `.powerLoss`); the
///   engine's (a region entered, an event queued for an absent app) are written before the signals about them
///   leave (`flushOutbox`), without waiting for the disk. So a `kill -9` at any moment loses nothing a client
///   or administrator was told; a power cut can lose the engine's last seconds (`StateDurability`).
/// - Sightings only move a region's last-seen time: that is saved every `lastSeenSaveInterval` while sightings
///   arrive, and at shutdown. After a restart the exit timing does not depend on it (see `restoreRegions`).
/// - A failed commit (disk full, read-only file system) is logged and kept, and retried on `StateJournal`'s
///   backoff (0.1 s doubling to 5 s), not at every commit: a commit meanwhile writes nothing, so a full disk
///   costs one write attempt per retry, however many calls come. A method whose change could not be saved
///   answers `StateNotSaved` saying so.
extension DaemonCore {
    package mutating func saveLater(_ change: StateChange) {
        journal.record(change)
        outbox.emit(.scheduleFlush)
    }

    /// The region's state is saved at the next commit (`StateJournal.markRegionChanged`).
    package mutating func markRegionChanged(_ key: EngineKey) {
        if journal.markRegionChanged(key) { outbox.emit(.scheduleFlush) }
    }

    /// Writes every pending change in one transaction. Returns the error if it failed (the changes are kept), or
    /// the standing one while a failed write waits for its retry (nothing is tried then unless `force`).
    /// Changes a method reply acknowledges are fsynced; the engine's are written without waiting for the disk.
    @discardableResult
    package mutating func commitState(_ durability: StateDurability = .processCrash, force: Bool = false) -> StateDatabaseError? {
        // Only what the journal marked is read, and only when a write may happen.
        var current: [EngineKey: StateJournal.RegionValues] = [:]
        if !journal.changedRegions.isEmpty, !journal.waitsForRetry(force: force) {
            let rooms = receiverRooms()
            let exitTimeout = Self.monitoringConfiguration(configuration).exitTimeout
            for key in journal.changedRegions {
                guard let monitored = engine.monitoredRegion(for: key) else { continue }
                current[key] = StateJournal.RegionValues(
                    monitored: monitored, heardBy: Self.storedHearing(engine.receiverRecord(for: key), rooms: rooms, exitTimeout: exitTimeout))
            }
        }
        let database = self.database
        let outcome = journal.commit(force: force, current: current) { batch throws(StateDatabaseError) in
            try database.apply(batch, durability: durability)
        }
        switch outcome {
        case .nothingToWrite:
            return nil
        case .saved(let ended):
            outbox.cancel(.stateRetry)
            if let ended {
                outbox.log(.notice, "the state database is writable again; \(ended.pending) changes kept since the failure are saved")
            }
            return nil
        case .waiting(let error):
            return error
        case .failed(let error, let dropped, let isNew, let retryIn):
            if dropped > 0 {
                outbox.log(.error, "\(dropped) unsaved state changes dropped: the state database has not been writable for a long time")
            }
            if isNew {
                outbox.log(
                    .error, "cannot save state, changes are kept in memory and retried: \(error). Until it works, a restart loses them",
                    ["state.file": "\(database.file)"])
            }
            // Each try is logged, so the backoff can be seen (and counted) in the log.
            outbox.log(
                .info, "state write failed; \(journal.failure?.pending ?? 0) changes wait, next try in \(retryIn)",
                ["state.file": "\(database.file)"])
            outbox.arm(.stateRetry, at: now + retryIn)
            return error
        }
    }

    /// Outside a commit (a watch event, GetStatus): recover or report a lost database now, not at the next change.
    package mutating func checkStateDatabase() {
        let wasLost = database.isLost
        do {
            try database.ensure()
            if journal.failure != nil {
                // With nothing pending, a failure that was the lost file is over; anything pending is written now
                // to the new file, or else on the retry's backoff.
                if wasLost, journal.isEmpty {
                    journal.recoveredWithNothingPending()
                    outbox.cancel(.stateRetry)
                } else {
                    commitState(force: wasLost)
                }
            }
        } catch {
            if journal.failed(error) {
                outbox.log(.error, "cannot save state: \(error). Until it works, a restart loses what changes", ["state.file": "\(database.file)"])
            }
        }
    }

    // MARK: Region rows

    package func storedRegion(_ session: ClientSession, _ region: BeaconRegion) -> StoredRegion {
        let monitored =
            engine.monitoredRegion(client: session.number, identifier: region.identifier)
            ?? MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown)
        return StoredRegion(client: session.number, appID: session.appID, monitored: monitored)
    }

    /// While sightings arrive, one timer saves the regions' last-seen times; none runs while nothing is seen.
    package mutating func scheduleLastSeenSave() {
        guard !outbox.isArmed(.lastSeenSave), engine.monitoredCount > 0 else { return }
        outbox.arm(.lastSeenSave, at: now + Self.lastSeenSaveInterval)
    }

    package mutating func markSeenRegionsChanged() {
        for (key, monitored) in engine.monitoredRegions where monitored.lastSeen != nil {
            journal.markRegionChanged(key)
        }
    }

    /// Each remote receiver's room (also while no node runs, and after shutdown), to save hearings by room.
    package func receiverRooms() -> [ReceiverID: String] { fleet.rooms }

    /// A region's hearings by room, for its row (nil when only this node's scanner heard it, or nobody). Hearings
    /// more than `exitTimeout` older than the latest can decide nothing (the monitor looks back that far from a
    /// region's last sighting) and are left out, so a row stays small however many receivers ever heard it; the
    /// rooms a blind region waits for are always kept.
    package static func storedHearing(_ record: ReceiverRecord?, rooms: [ReceiverID: String], exitTimeout: Duration) -> StoredHearing? {
        guard let record else { return nil }
        let latest = max(record.local ?? .min, record.remote.values.max() ?? .min)
        let window =
            Int64(clamping: exitTimeout.components.seconds) &* 1_000_000
            &+ Int64(clamping: exitTimeout.components.attoseconds / 1_000_000_000_000)
        let since = latest.subtractingReportingOverflow(window).partialValue
        var remote: [String: Int64] = [:]
        for (id, time) in record.remote where time >= since || record.waitingFor?.contains(id) == true {
            if let room = rooms[id] { remote[room] = time }
        }
        let waiting = record.waitingFor.map { $0.compactMap { rooms[$0] }.sorted() }
        guard !remote.isEmpty || waiting?.isEmpty == false else { return nil }
        return StoredHearing(local: record.local, remote: remote, waitingFor: waiting)
    }

    /// A saved hearing for the monitor: each room gets the number it already has, else the next free one. Rooms
    /// not in ESPresense's form (a hand edit) are left out.
    package static func receiverRecord(_ hearing: StoredHearing, numbering: inout [String: ReceiverID]) -> ReceiverRecord {
        func id(_ room: String) -> ReceiverID? {
            guard ReceiverDirectory.isRoom(room) else { return nil }
            if let known = numbering[room] { return known }
            let next = ReceiverID(rawValue: UInt32(numbering.count + 1))
            numbering[room] = next
            return next
        }
        var remote: [ReceiverID: Int64] = [:]
        for (room, time) in hearing.remote.sorted(by: { $0.key < $1.key }) { if let id = id(room) { remote[id] = time } }
        let waiting = hearing.waitingFor.map { Set($0.compactMap(id)) }
        return ReceiverRecord(local: hearing.local, remote: remote, waitingFor: waiting)
    }

    // MARK: Restart

    /// Puts back the regions saved before the restart, each under its client (kept detached until the app
    /// registers again), and keeps them blind until the scanner sees: the time beacond was down counts as time
    /// nothing could be seen, never as absence. So a beacon still present gives no new `DidEnterRegion`, and one
    /// that left while beacond was down gives exactly one `DidExitRegion`, `exit_timeout` after scanning resumed
    /// (by then more than the exit timeout has passed since it was last seen). Regions of apps no longer declared
    /// or no longer allowed to monitor are dropped, each logged.
    package mutating func restoreRegions(at now: Timestamp) throws(StateDatabaseError) -> [DaemonEffect] {
        outbox.now = now
        // A bounded state, whatever the file holds: each app's first max_regions_per_app saved regions resume, the
        // rest are removed, and said (a file from before the limit, or a limit lowered since).
        let perApp = configuration.maxRegionsPerApp
        do {
            for (appID, count) in try database.trimRegions(perApp: perApp).sorted(by: { $0.key < $1.key }) {
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
        let loaded = try database.loadRegions(perApp: perApp)
        for problem in loaded.problems { outbox.log(.warning, "\(database.file): \(problem)") }
        clients.reserveNumbers(through: try database.highestStoredClient())
        // Blind first, then restore: a region restored into a monitor that sees would be timed from its saved
        // last sighting, which may be long past (it is saved every few seconds, and the downtime may be long), so
        // suspending afterwards would fire its exit right here, with nobody to route it to, and the exit would be
        // lost. Restored while blind, every region waits for a full exit_timeout of scanning instead.
        _ = engine.suspendDetection(at: now)
        let core = self
        let plan = RegionRestore.plan(
            loaded.regions,
            status: { appID in
                core.configuration.apps[appID] == nil ? nil : core.effectiveStatus(appID)
            }, declaredWhere: "\(configDirectory)/apps.d")
        for dropped in plan.dropped {
            outbox.log(.notice, "\(dropped.count) saved regions of \(dropped.appID) not resumed: \(dropped.reason)")
            saveLater(.removeClient(dropped.client))
        }
        var resumedPlan = plan.resumed
        var moved: [(client: Int, region: BeaconRegion)] = []
        for index in resumedPlan.indices {
            let entry = resumedPlan[index]
            guard let app = configuration.apps[entry.appID] else { continue }
            resumedPlan[index].regions = entry.regions.compactMap { monitored in
                switch followingDevice(monitored, app: app) {
                case .unchanged: return monitored
                case .moved(let following):
                    moved.append((entry.client, following.region))
                    return following
                case .gone(let name):
                    outbox.log(
                        .warning,
                        "saved region \(monitored.region.identifier) of \(entry.appID) not resumed: no private device named "
                            + "'\(name)' is declared for it any more (declare its key again under [devices] and start it again)")
                    saveLater(.removeRegion(client: entry.client, identifier: monitored.region.identifier))
                    return nil
                }
            }
        }
        var restored = 0
        let heard = Dictionary(
            loaded.regions.map { (EngineKey.region(client: $0.client, identifier: $0.monitored.region.identifier), $0) },
            uniquingKeysWith: { _, last in last })
        var receivers: [String: ReceiverID] = [:]
        for resumed in resumedPlan where !resumed.regions.isEmpty {
            clients.restore(number: resumed.client, appID: resumed.appID, regions: resumed.regions.map(\.region))
            for monitored in resumed.regions {
                engine.restore(monitored, client: resumed.client, at: now)
                let key = EngineKey.region(client: resumed.client, identifier: monitored.region.identifier)
                guard let hearing = heard[key]?.heardBy else { continue }
                let record = Self.receiverRecord(hearing, numbering: &receivers)
                engine.restoreReceivers(
                    record, client: resumed.client, identifier: monitored.region.identifier,
                    offline: Set(receivers.values))
            }
            restored += resumed.regions.count
        }
        for (client, region) in moved {
            guard let session = clients[client] else { continue }
            outbox.log(
                .notice, "saved region \(region.identifier) of \(session.appID) follows device \(region.constraint.deviceName ?? "") to its new key")
            saveLater(.saveRegion(storedRegion(session, region)))
        }
        // Offline until their status or a reading says otherwise (or `[mqtt]` turns out to be off).
        for (room, id) in receivers { fleet.learn(id, room) }
        guard restored > 0 else { return outbox.take() }
        let apps = clients.appIDs.count
        outbox.log(
            .info,
            "resumed \(restored) monitored regions of \(apps) apps from \(database.file); "
                + "they are unknown until the scanner has looked for exit_timeout"
        )
        return outbox.take()
    }
}
