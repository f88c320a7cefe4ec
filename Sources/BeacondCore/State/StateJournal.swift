package import BeaconKit

/// What must reach the state database and has not yet: the region durability's bookkeeping, with no I/O. The
/// daemon records changes as they happen, asks for a batch when it commits, and says how the write went; the
/// journal decides what the next transaction holds, what a failed one keeps, when a failed write is tried again,
/// and which delivered queued events must not be sent twice before their removal is on disk.
///
/// Nothing else writes these: before, they were six loose properties of the daemon that four files changed.
package struct StateJournal {
    /// Why the database cannot be written now, and how many changes wait for it.
    package struct Failure: Equatable {
        package var error: StateDatabaseError
        package var pending: Int
        package var reason: String { error.description }
    }

    /// How one commit went.
    package enum CommitOutcome: Equatable {
        /// Nothing waited to be written.
        case nothingToWrite
        /// The batch is in the database; `ended` is the failure this success ends, if there was one.
        case saved(ended: Failure?)
        /// The write failed and everything is kept, but for the oldest changes `dropped` beyond the limit;
        /// `isNew` when the database was writable until now. The next try is due in `retryIn`.
        case failed(StateDatabaseError, dropped: Int, isNew: Bool, retryIn: Duration)
        /// Not tried: the last write failed and its retry is not due yet. The changes wait for it.
        case waiting(StateDatabaseError)
    }

    /// The first retry after a failed write; each further failure doubles it, up to `maximumRetryDelay`. A full
    /// disk then costs one write attempt per delay, however many calls and signals come meanwhile
    /// (retrying at each of them would cost a write of everything pending, per call).
    package static let firstRetryDelay: Duration = .milliseconds(100)
    package static let maximumRetryDelay: Duration = .seconds(5)

    /// Unsaved changes kept for retry while the database cannot be written; beyond this the oldest are dropped,
    /// so a long outage of the disk cannot grow memory without bound.
    package let maximumUnsavedChanges: Int
    /// Structural changes (regions added and removed, events queued and delivered) waiting, in the order they were
    /// recorded.
    private var pending = PendingChanges()
    /// Regions whose state, last determination or last sighting changed: their values are taken at commit time,
    /// so an outage keeps one entry per region, not one per change.
    package private(set) var changedRegions: Set<EngineKey> = []
    /// Counts the changes recorded (saved or not), so a method call can tell whether it changed anything.
    package private(set) var changeCount = 0
    /// Changes to record once the signals now waiting are sent (the removal of delivered queued events).
    private var afterSend: [StateChange] = []
    /// Queued events sent to a client whose removal is not committed yet: never sent twice (a second
    /// registration in the same loop turn, or while the database cannot be written).
    private var sentQueuedEvents: Set<Int64> = []
    package private(set) var failure: Failure?
    /// While writes fail: the delay before the next try, and whether it has passed (`retryIsDue`).
    private var retry = (delay: Duration?.none, due: false)

    package init(maximumUnsavedChanges: Int = 100_000) {
        self.maximumUnsavedChanges = maximumUnsavedChanges
    }

    /// Nothing waits to be written.
    package var isEmpty: Bool { pending.isEmpty && changedRegions.isEmpty }

    package mutating func record(_ change: StateChange) {
        changeCount &+= 1
        pending.append(change)
    }

    /// The region's state is saved at the next commit. Not counted in `changeCount`: a state the engine
    /// re-determined is not a change a method call asked for, so it never fails one. Returns whether it was
    /// newly marked (ranging keys are never saved).
    @discardableResult
    package mutating func markRegionChanged(_ key: EngineKey) -> Bool {
        guard case .region = key else { return false }
        return changedRegions.insert(key).inserted
    }

    /// Queued events handed to a client: their removal is recorded once the signals carrying them are sent
    /// (`signalsSent`), and until it is committed they count as sent.
    package mutating func queuedEventsSent(appID: String, ids: [Int64]) {
        sentQueuedEvents.formUnion(ids)
        afterSend.append(.removeQueuedEvents(appID: appID, ids: ids))
    }

    package func wasSent(queuedEvent id: Int64) -> Bool { sentQueuedEvents.contains(id) }

    /// The signals that were waiting are sent: what their sending settles is recorded now. Returns whether there
    /// was anything (then the caller commits).
    package mutating func signalsSent() -> Bool {
        guard !afterSend.isEmpty else { return false }
        for change in afterSend { pending.append(change) }
        afterSend.removeAll()
        return true
    }

    /// A marked region's values as they are now: its state, and who heard it (nil: only this node's scanner).
    package struct RegionValues {
        package var monitored: MonitoredRegion
        package var heardBy: StoredHearing?
    }

    /// The next transaction: the structural changes, then each marked region's values as `current` gives them
    /// (the caller reads them for `changedRegions`; a region it has no values for, gone from the engine, is
    /// skipped). nil when there is nothing to write.
    package mutating func batch(current: [EngineKey: RegionValues]) -> [StateChange]? {
        var updates: [StateChange] = []
        for key in changedRegions {
            guard case .region(let client, let identifier) = key, let values = current[key] else { continue }
            updates.append(.updateRegionState(client: client, identifier: identifier, values.monitored, heardBy: values.heardBy))
        }
        guard !pending.isEmpty || !updates.isEmpty else {
            changedRegions.removeAll()
            return nil
        }
        return pending.ordered + updates
    }

    /// While a failed write's retry is not due, a commit tries nothing (unless `force`).
    package func waitsForRetry(force: Bool) -> Bool {
        failure != nil && retry.delay != nil && !retry.due && !force && !isEmpty
    }

    /// The retry timer fired: the next commit tries the write again.
    package mutating func retryIsDue() {
        retry.due = true
    }

    /// Writes the next batch with `write` (the database, or a fake in tests) and records how it went. While a
    /// failed write's retry is not due, nothing is tried (`waiting`) unless `force` (shutdown, a database file
    /// just written anew).
    package mutating func commit(
        force: Bool = false, current: [EngineKey: RegionValues] = [:],
        write: ([StateChange]) throws(StateDatabaseError) -> Void
    ) -> CommitOutcome {
        // A failure found outside a commit (the file lost) has no retry timer yet: the first commit tries, and arms it.
        if let failure, waitsForRetry(force: force) { return .waiting(failure.error) }
        guard let batch = batch(current: current) else { return .nothingToWrite }
        do {
            try write(batch)
        } catch {
            let outcome = commitFailed(error)
            let delay = retry.delay.map { min($0 * 2, Self.maximumRetryDelay) } ?? Self.firstRetryDelay
            retry = (delay, false)
            return .failed(error, dropped: outcome.dropped, isNew: outcome.isNew, retryIn: delay)
        }
        return .saved(ended: committed())
    }

    /// The batch is in the database. Returns the failure this success ends, if there was one.
    package mutating func committed() -> Failure? {
        pending = PendingChanges()
        changedRegions.removeAll()
        if afterSend.isEmpty { sentQueuedEvents.removeAll() }
        retry = (nil, false)
        defer { failure = nil }
        return failure
    }

    /// The batch could not be written: everything stays for the next commit, except the oldest changes beyond
    /// `maximumUnsavedChanges`. Returns how many were dropped, and whether this failure is new (not a retry).
    package mutating func commitFailed(_ error: StateDatabaseError) -> (dropped: Int, isNew: Bool) {
        let dropped = pending.dropOldest(beyond: maximumUnsavedChanges)
        return (dropped, failed(error))
    }

    /// The database file cannot be written (found outside a commit). Returns whether this failure is new.
    @discardableResult
    package mutating func failed(_ error: StateDatabaseError) -> Bool {
        defer { failure = Failure(error: error, pending: pending.count) }
        return failure == nil
    }

    /// The database is writable again and nothing waits: the failure is over without a commit.
    package mutating func recoveredWithNothingPending() {
        guard isEmpty else { return }
        failure = nil
        retry.delay = nil
    }
}

/// The structural changes waiting for the state database, by the order they were recorded in. A region's change
/// replaces the one waiting for its row, so what waits is bounded by the rows it describes: a region saved then
/// removed is one removal.
private struct PendingChanges {
    /// A row of `monitored_region`: the later of two changes to one row replaces the earlier.
    struct RegionRow: Hashable {
        var client: Int
        var identifier: String
    }

    private var changes: [Int: StateChange] = [:]
    private var nextOrder = 0
    /// The order of the change waiting for each region row.
    private var rowChanges: [RegionRow: Int] = [:]
    /// The rows of each client that have a change waiting, and the order of the `removeClient` waiting for it.
    private var rowsByClient: [Int: Set<String>] = [:]
    private var clientRemovals: [Int: Int] = [:]

    var isEmpty: Bool { changes.isEmpty }
    var count: Int { changes.count }

    /// In the order they were recorded.
    var ordered: [StateChange] {
        changes.sorted { $0.key < $1.key }.map(\.value)
    }

    /// Adds a change to what waits, replacing what it makes moot.
    mutating func append(_ change: StateChange) {
        switch change {
        case .saveRegion(let stored):
            replace(RegionRow(client: stored.client, identifier: stored.monitored.region.identifier))
        case .removeRegion(let client, let identifier):
            replace(RegionRow(client: client, identifier: identifier))
        case .removeClient(let client):
            // It deletes every row of the client: the changes waiting for them, and an earlier removal, are moot.
            for identifier in rowsByClient.removeValue(forKey: client) ?? [] {
                if let earlier = rowChanges.removeValue(forKey: RegionRow(client: client, identifier: identifier)) {
                    changes[earlier] = nil
                }
            }
            if let earlier = clientRemovals[client] { changes[earlier] = nil }
            clientRemovals[client] = nextOrder
        case .updateRegionState, .queueEvent, .removeQueuedEvents:
            break
        }
        changes[nextOrder] = change
        nextOrder += 1
    }

    /// The row's waiting change is replaced by the one being appended: a save writes every column and a removal
    /// deletes the row, so the later alone leaves the row as both would.
    private mutating func replace(_ row: RegionRow) {
        if let earlier = rowChanges[row] { changes[earlier] = nil }
        rowChanges[row] = nextOrder
        rowsByClient[row.client, default: []].insert(row.identifier)
    }

    /// Drops the oldest changes beyond `limit` (a database that cannot be written must not grow memory without
    /// bound). Returns how many were dropped.
    mutating func dropOldest(beyond limit: Int) -> Int {
        let dropped = max(0, changes.count - limit)
        guard dropped > 0 else { return 0 }
        for order in changes.keys.sorted().prefix(dropped) { changes[order] = nil }
        rowChanges = rowChanges.filter { changes[$0.value] != nil }
        rowsByClient = Dictionary(grouping: rowChanges.keys, by: \.client).mapValues { Set($0.map(\.identifier)) }
        clientRemovals = clientRemovals.filter { changes[$0.value] != nil }
        return dropped
    }
}
