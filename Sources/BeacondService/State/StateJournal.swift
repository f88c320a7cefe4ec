import BeaconKit

/// What must reach the state database and has not yet: the region durability's bookkeeping, with no I/O. The
/// daemon records changes as they happen, asks for a batch when it commits, and says how the write went; the
/// journal decides what the next transaction holds, what a failed one keeps, and which delivered queued events
/// must not be sent twice before their removal is on disk.
///
/// Nothing else writes these: before, they were six loose properties of the daemon that four files changed.
struct StateJournal {
    /// Why the database cannot be written now, and how many changes wait for it.
    struct Failure: Equatable {
        var reason: String
        var pending: Int
    }

    /// Unsaved changes kept for retry while the database cannot be written; beyond this the oldest are dropped,
    /// so a long outage of the disk cannot grow memory without bound.
    let maximumUnsavedChanges: Int
    /// Structural changes (regions added and removed, events queued and delivered), in order.
    private(set) var changes: [StateChange] = []
    /// Regions whose state, last determination or last sighting changed: their values are taken at commit time,
    /// so an outage keeps one entry per region, not one per change.
    private(set) var changedRegions: Set<EngineKey> = []
    /// Counts the changes recorded (saved or not), so a method call can tell whether it changed anything.
    private(set) var changeCount = 0
    /// Changes to record once the signals now waiting are sent (the removal of delivered queued events).
    private var afterSend: [StateChange] = []
    /// Queued events sent to a client whose removal is not committed yet: never sent twice (a second
    /// registration in the same loop turn, or while the database cannot be written).
    private var sentQueuedEvents: Set<Int64> = []
    private(set) var failure: Failure?

    init(maximumUnsavedChanges: Int = 100_000) {
        self.maximumUnsavedChanges = maximumUnsavedChanges
    }

    /// Nothing waits to be written.
    var isEmpty: Bool { changes.isEmpty && changedRegions.isEmpty }

    mutating func record(_ change: StateChange) {
        changes.append(change)
        changeCount &+= 1
    }

    /// The region's state is saved at the next commit. Not counted in `changeCount`: a state the engine
    /// re-determined is not a change a method call asked for, so it never fails one. Returns whether it was
    /// newly marked (ranging keys are never saved).
    @discardableResult
    mutating func markRegionChanged(_ key: EngineKey) -> Bool {
        guard case .region = key else { return false }
        return changedRegions.insert(key).inserted
    }

    /// Queued events handed to a client: their removal is recorded once the signals carrying them are sent
    /// (`signalsSent`), and until it is committed they count as sent.
    mutating func queuedEventsSent(appID: String, ids: [Int64]) {
        sentQueuedEvents.formUnion(ids)
        afterSend.append(.removeQueuedEvents(appID: appID, ids: ids))
    }

    func wasSent(queuedEvent id: Int64) -> Bool { sentQueuedEvents.contains(id) }

    /// The signals that were waiting are sent: what their sending settles is recorded now. Returns whether there
    /// was anything (then the caller commits).
    mutating func signalsSent() -> Bool {
        guard !afterSend.isEmpty else { return false }
        changes += afterSend
        afterSend.removeAll()
        return true
    }

    /// The next transaction: the structural changes, then each marked region's values as `currentState` gives
    /// them now (a region gone from the engine is skipped). nil when there is nothing to write.
    mutating func batch(currentState: (EngineKey) -> MonitoredRegion?,
                        heardBy: (EngineKey) -> StoredHearing? = { _ in nil }) -> [StateChange]? {
        var updates: [StateChange] = []
        for key in changedRegions {
            guard case .region(let client, let identifier) = key, let monitored = currentState(key) else { continue }
            updates.append(.updateRegionState(client: client, identifier: identifier, monitored, heardBy: heardBy(key)))
        }
        guard !changes.isEmpty || !updates.isEmpty else {
            changedRegions.removeAll()
            return nil
        }
        return changes + updates
    }

    /// The batch is in the database. Returns the failure this success ends, if there was one.
    mutating func committed() -> Failure? {
        changes.removeAll()
        changedRegions.removeAll()
        if afterSend.isEmpty { sentQueuedEvents.removeAll() }
        defer { failure = nil }
        return failure
    }

    /// The batch could not be written: everything stays for the next commit, except the oldest changes beyond
    /// `maximumUnsavedChanges`. Returns how many were dropped, and whether this failure is new (not a retry).
    mutating func commitFailed(_ reason: String) -> (dropped: Int, isNew: Bool) {
        let dropped = max(0, changes.count - maximumUnsavedChanges)
        changes.removeFirst(dropped)
        return (dropped, failed(reason))
    }

    /// The database file cannot be written (found outside a commit). Returns whether this failure is new.
    @discardableResult
    mutating func failed(_ reason: String) -> Bool {
        defer { failure = Failure(reason: reason, pending: changes.count) }
        return failure == nil
    }

    /// The database is writable again and nothing waits: the failure is over without a commit.
    mutating func recoveredWithNothingPending() {
        guard isEmpty else { return }
        failure = nil
    }
}
