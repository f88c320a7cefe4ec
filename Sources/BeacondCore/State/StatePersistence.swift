package import BeaconKit

/// What the core saves and when: the journal of changes not yet written (`StateJournal`) and the state database they
/// go to (`StateDatabase`), owned together, so nothing reaches the database around the journal and a failed write
/// is retried on one backoff.
///
/// - A D-Bus method's changes are committed and fsynced before its reply leaves (`DaemonCore.answer`, with
///   `.powerLoss`); the engine's (a region entered, an event queued for an absent app) are written before the
///   signals about them leave (`flushOutbox`), without waiting for the disk. So a `kill -9` at any moment loses
///   nothing a client or administrator was told; a power cut can lose the engine's last seconds (`StateDurability`).
/// - A failed commit (disk full, read-only file system) is logged and kept, and retried on `StateJournal`'s backoff
///   (0.1 s doubling to 5 s), not at every commit: a commit meanwhile writes nothing, so a full disk costs one
///   write attempt per retry, however many calls come.
///
/// Authorization records and the services switch are written at once, not journaled: a decision is applied only
/// once it is saved (`AuthorizationService`), through `settings`.
package struct StatePersistence {
    package private(set) var journal = StateJournal()
    private let database: any StateDatabase

    package init(database: any StateDatabase) {
        self.database = database
    }

    /// The database's file, for log lines and status.
    package var file: String { database.file }

    /// Where authorization decisions and the services switch are written, synchronously.
    package var settings: SettingsWriter { SettingsWriter(database: database) }

    /// Writes what `AuthorizationService` decided, before it is applied.
    package struct SettingsWriter {
        fileprivate let database: any StateDatabase

        package func save(_ record: AuthorizationRecord, for appID: String) throws(StateDatabaseError) {
            try database.save(record, for: appID)
        }

        package func saveLocationServicesSwitch(_ enabled: Bool) throws(StateDatabaseError) {
            try database.saveLocationServicesSwitch(enabled)
        }
    }

    // MARK: Recording

    /// The change is saved at the next commit; a flush is due.
    package mutating func saveLater(_ change: StateChange, _ outbox: inout CoreOutbox) {
        journal.record(change)
        outbox.emit(.scheduleFlush)
    }

    /// The region's state is saved at the next commit (`StateJournal.markRegionChanged`).
    package mutating func markRegionChanged(_ key: EngineKey, _ outbox: inout CoreOutbox) {
        if journal.markRegionChanged(key) { outbox.emit(.scheduleFlush) }
    }

    /// Every region in `keys` is saved at the next commit, with no flush of its own (the last-seen timer, shutdown).
    package mutating func markRegionsChanged(_ keys: some Sequence<EngineKey>) {
        for key in keys { journal.markRegionChanged(key) }
    }

    /// Queued events handed to a client: not sent again, and removed once the signals are sent.
    package mutating func queuedEventsSent(appID: String, ids: [Int64], _ outbox: inout CoreOutbox) {
        journal.queuedEventsSent(appID: appID, ids: ids)
        outbox.emit(.scheduleFlush)
    }

    /// The signals were sent: whether what that settles must be committed now.
    package mutating func signalsSent() -> Bool { journal.signalsSent() }

    package mutating func retryIsDue() { journal.retryIsDue() }

    // MARK: Committing

    /// The regions whose values the next commit needs, or none when no write may happen now (a failed write waits
    /// for its retry, unless `force`): only what the journal marked is read, and only when it is written.
    package func regionsToRead(force: Bool) -> Set<EngineKey> {
        journal.waitsForRetry(force: force) ? [] : journal.changedRegions
    }

    /// Writes every pending change in one transaction, with `current` the values of `regionsToRead`. Returns the
    /// error if it failed (the changes are kept), or the standing one while a failed write waits for its retry
    /// (nothing is tried then unless `force`).
    @discardableResult
    package mutating func commit(
        _ durability: StateDurability, force: Bool, current: [EngineKey: StateJournal.RegionValues], _ outbox: inout CoreOutbox
    ) -> StateDatabaseError? {
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
            outbox.arm(.stateRetry, at: outbox.now + retryIn)
            return error
        }
    }

    /// What `checkDatabase` found.
    package enum Check: Equatable {
        /// Nothing to do now.
        case fine
        /// Commit what is pending now (`force`: the file was lost and is new, so write at once, not at the retry).
        case commit(force: Bool)
    }

    /// Outside a commit (a watch event, GetStatus): recover or report a lost database now, not at the next change.
    package mutating func checkDatabase(_ outbox: inout CoreOutbox) -> Check {
        let wasLost = database.isLost
        do {
            try database.ensure()
            guard journal.failure != nil else { return .fine }
            // With nothing pending, a failure that was the lost file is over; anything pending is written now to the
            // new file, or else on the retry's backoff.
            if wasLost, journal.isEmpty {
                journal.recoveredWithNothingPending()
                outbox.cancel(.stateRetry)
                return .fine
            }
            return .commit(force: wasLost)
        } catch {
            if journal.failed(error) {
                outbox.log(.error, "cannot save state: \(error). Until it works, a restart loses what changes", ["state.file": "\(database.file)"])
            }
            return .fine
        }
    }

    // MARK: Reading

    package func queuedEvents(of appID: String, expiredBefore: Timestamp) throws(StateDatabaseError) -> QueuedEvents {
        try database.queuedEvents(of: appID, expiredBefore: expiredBefore)
    }

    package func dropExpiredQueuedEvents(before: Timestamp) throws(StateDatabaseError) -> [String: Int] {
        try database.dropExpiredQueuedEvents(before: before)
    }

    package func oldestQueuedEventTime() throws(StateDatabaseError) -> Timestamp? { try database.oldestQueuedEventTime() }

    package func queuedEventCounts() throws(StateDatabaseError) -> [String: Int] { try database.queuedEventCounts() }

    /// A bounded state at start, whatever the file holds: each app's first `perApp` (`max_regions_per_app` in
    /// `configFile`) saved regions resume, the rest are removed, and said (a file from before the limit, or a limit
    /// lowered since).
    package func trimRegions(perApp: Int, configFile: String, _ outbox: inout CoreOutbox) {
        do {
            for (appID, count) in try database.trimRegions(perApp: perApp).sorted(by: { $0.key < $1.key }) {
                outbox.log(
                    .warning,
                    """
                    \(count) saved regions of \(appID) removed: beyond max_regions_per_app = \(perApp) in \(configFile) \
                    (its first \(perApp) saved regions resume); raise the limit before a restart to keep more
                    """
                )
            }
        } catch {
            outbox.log(.error, "\(error); only the first \(perApp) saved regions of each app resume, the others stay in the file")
        }
    }

    package func loadRegions(perApp: Int) throws(StateDatabaseError) -> (regions: [StoredRegion], problems: [String]) {
        try database.loadRegions(perApp: perApp)
    }

    package func highestStoredClient() throws(StateDatabaseError) -> Int { try database.highestStoredClient() }
}
