import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Testing

/// What the next state transaction holds, what a failed one keeps, and delivered queued events, without a database.
@Suite("state journal")
struct StateJournalTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func monitored(_ identifier: String, _ state: RegionState) throws -> MonitoredRegion {
        let region = try BeaconRegion(identifier: identifier, constraint: BeaconIdentityConstraint(uuid: uuid, major: 1))
        return MonitoredRegion(region: region, state: state, lastSeen: nil, lastDeterminedState: state)
    }

    static let diskFull = StateDatabaseError(
        file: "/var/lib/beacond/state.sqlite", message: "database or disk is full",
        fix: "free disk space on the file system of /var/lib/beacond")
    static let readOnly = StateDatabaseError(
        file: "/var/lib/beacond/state.sqlite", message: "attempt to write a readonly database",
        fix: "remount the file system read-write")
    static let deleted = StateDatabaseError(
        file: "/var/lib/beacond/state.sqlite", message: "the state database was deleted",
        fix: "make /var/lib/beacond writable")

    static func stored(_ identifier: String, client: Int = 1) throws -> StoredRegion {
        StoredRegion(client: client, appID: "org.example.A", monitored: try monitored(identifier, .unknown))
    }

    /// Structural changes in order, then each marked region as the engine has it at commit time (not as it was
    /// when marked), once per region however often it changed; ranging keys and regions gone are not written.
    @Test func aBatchHoldsChangesThenCurrentRegionStates() throws {
        var journal = StateJournal()
        let empty = journal.batch(current: [:])
        #expect(empty == nil)
        let lobby = try Self.stored("lobby")
        journal.record(.saveRegion(lobby))
        journal.record(.removeRegion(client: 1, identifier: "old"))
        let key = EngineKey.region(client: 1, identifier: "lobby")
        let marked = [
            journal.markRegionChanged(key), journal.markRegionChanged(key),
            journal.markRegionChanged(.ranging(client: 1, constraint: try BeaconIdentityConstraint(uuid: Self.uuid))),
        ]
        #expect(marked == [true, false, false])
        journal.markRegionChanged(.region(client: 9, identifier: "gone"))
        let inside = try Self.monitored("lobby", .inside)
        let batch = journal.batch(current: [key: StateJournal.RegionValues(monitored: inside, heardBy: nil)])
        #expect(
            batch == [
                .saveRegion(lobby), .removeRegion(client: 1, identifier: "old"),
                .updateRegionState(client: 1, identifier: "lobby", inside),
            ])
        #expect(journal.changeCount == 2)
        let ended = journal.committed()
        #expect(ended == nil)
        #expect(journal.isEmpty)
        let after = journal.batch(current: [key: StateJournal.RegionValues(monitored: inside, heardBy: nil)])
        #expect(after == nil)
    }

    /// A failed write keeps everything for the retry and says the failure is new only once; the success that
    /// follows ends it (for the log) and clears the journal.
    @Test func aFailedCommitKeepsTheChangesUntilOneSucceeds() throws {
        var journal = StateJournal()
        journal.record(.removeClient(1))
        _ = journal.batch(current: [:])
        let first = journal.commitFailed(Self.diskFull)
        #expect(first == (dropped: 0, isNew: true))
        journal.record(.removeClient(2))
        let retry = journal.batch(current: [:])
        #expect(retry == [.removeClient(1), .removeClient(2)])
        let second = journal.commitFailed(Self.diskFull)
        #expect(second == (dropped: 0, isNew: false))
        #expect(journal.failure == StateJournal.Failure(error: Self.diskFull, pending: 2))
        let ended = journal.committed()
        #expect(ended == StateJournal.Failure(error: Self.diskFull, pending: 2))
        #expect(journal.failure == nil)
        #expect(journal.isEmpty)
    }

    /// A long outage cannot grow memory without bound: beyond the limit the oldest changes go.
    @Test func anOutageKeepsAtMostTheLimit() throws {
        var journal = StateJournal(maximumUnsavedChanges: 3)
        for client in 1...5 { journal.record(.removeClient(client)) }
        let outcome = journal.commitFailed(Self.readOnly)
        #expect(outcome.dropped == 2)
        let kept = journal.batch(current: [:])
        #expect(kept == [.removeClient(3), .removeClient(4), .removeClient(5)])
        #expect(journal.failure?.pending == 3)
        #expect(journal.changeCount == 5)
    }

    /// A full disk under a client that keeps changing its 20 regions (issue 21: each call cost a write of
    /// everything pending). Expect one write attempt when the disk fails, then one per retry of the backoff
    /// (0.1 s doubling to its cap), never one per call; calls meanwhile answer with the standing failure; what
    /// waits is one change per region however often it changed; and the success that follows saves it all.
    @Test func aFailingDiskIsRetriedOnItsBackoffNotOnEveryCall() throws {
        var journal = StateJournal()
        var attempts = 0
        var written: [StateChange] = []
        var diskFull = true
        let write = { (batch: [StateChange]) throws(StateDatabaseError) in
            attempts += 1
            if diskFull { throw Self.diskFull }
            written = batch
        }
        var delays: [Duration] = []
        var waited = 0
        for call in 0..<1000 {
            let identifier = "r\(call % 20)"
            journal.record(call % 3 == 2 ? .removeRegion(client: 1, identifier: identifier) : .saveRegion(try Self.stored(identifier)))
            switch journal.commit(write: write) {
            case .failed(let error, _, _, let retryIn):
                #expect(error == Self.diskFull)
                delays.append(retryIn)
            case .waiting(let error):
                #expect(error == Self.diskFull)
                waited += 1
            case let other:
                Issue.record("call \(call): \(other)")
            }
            // The retry timer fires ten times over the thousand calls.
            if call % 100 == 50 { journal.retryIsDue() }
        }
        #expect(attempts == 11)
        #expect(waited == 989)
        #expect(
            delays == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                .milliseconds(1600), .milliseconds(3200),
            ] + Array(repeating: StateJournal.maximumRetryDelay, count: 5))
        #expect(journal.failure?.pending == 20)

        diskFull = false
        journal.retryIsDue()
        let saved = journal.commit(write: write)
        #expect(saved == .saved(ended: StateJournal.Failure(error: Self.diskFull, pending: 20)))
        #expect(attempts == 12)
        #expect(written.count == 20)
        #expect(written.contains(.removeRegion(client: 1, identifier: "r0")))

        // The next outage starts the backoff again from its first delay.
        diskFull = true
        journal.record(.removeClient(1))
        let again = journal.commit(write: write)
        #expect(again == .failed(Self.diskFull, dropped: 0, isNew: true, retryIn: .milliseconds(100)))
    }

    /// What waits is one change per row it describes: a region saved then removed is one removal, saved twice
    /// the later save; a removed client's earlier region changes go, and what follows its removal stays after it.
    @Test func pendingChangesCoalescePerRegion() throws {
        var journal = StateJournal()
        let lobby = try Self.stored("lobby"), hall = try Self.stored("hall"), other = try Self.stored("hall", client: 2)
        journal.record(.saveRegion(lobby))
        journal.record(.saveRegion(other))
        journal.record(.removeRegion(client: 1, identifier: "lobby"))
        journal.record(.saveRegion(hall))
        journal.record(.saveRegion(hall))
        let first = journal.batch(current: [:])
        #expect(first == [.saveRegion(other), .removeRegion(client: 1, identifier: "lobby"), .saveRegion(hall)])
        journal.record(.removeClient(1))
        journal.record(.saveRegion(lobby))
        journal.record(.removeClient(1))
        journal.record(.saveRegion(lobby))
        let second = journal.batch(current: [:])
        #expect(second == [.saveRegion(other), .removeClient(1), .saveRegion(lobby)])
        #expect(journal.changeCount == 9)
    }

    /// Delivered queued events: sent once, their removal recorded only after the signals went out, and counted as
    /// sent until that removal is committed (also across a failed commit), so a second registration meanwhile
    /// does not get them again.
    @Test func deliveredQueuedEventsAreNotSentTwice() throws {
        var journal = StateJournal()
        journal.queuedEventsSent(appID: "org.example.A", ids: [7, 8])
        #expect(journal.wasSent(queuedEvent: 7) && journal.wasSent(queuedEvent: 8) && !journal.wasSent(queuedEvent: 9))
        // A commit before the signals are sent does not write the removal, nor forget what was sent.
        journal.record(.removeClient(3))
        let before = journal.batch(current: [:])
        #expect(before == [.removeClient(3)])
        _ = journal.committed()
        #expect(journal.wasSent(queuedEvent: 7))
        let sent = [journal.signalsSent(), journal.signalsSent()]
        #expect(sent == [true, false])
        let removal = journal.batch(current: [:])
        #expect(removal == [.removeQueuedEvents(appID: "org.example.A", ids: [7, 8])])
        _ = journal.commitFailed(Self.diskFull)
        #expect(journal.wasSent(queuedEvent: 7))
        _ = journal.committed()
        #expect(!journal.wasSent(queuedEvent: 7))
    }

    /// The database file lost outside a commit: reported once; the next commit tries the write (there is no retry
    /// timer yet); over without a commit only when nothing waits.
    @Test func aLostFileIsReportedOnceAndEndsWhenNothingWaits() throws {
        var journal = StateJournal()
        let reported = [journal.failed(Self.deleted), journal.failed(Self.deleted)]
        #expect(reported == [true, false])
        journal.record(.removeClient(1))
        journal.recoveredWithNothingPending()
        #expect(journal.failure != nil)
        // No write has failed yet, so none waits for a retry: the next commit tries.
        var attempts = 0
        let tried = journal.commit { _ throws(StateDatabaseError) in
            attempts += 1
            throw Self.deleted
        }
        #expect(tried == .failed(Self.deleted, dropped: 0, isNew: false, retryIn: StateJournal.firstRetryDelay))
        #expect(attempts == 1)
        _ = journal.committed()
        journal.failed(Self.deleted)
        journal.recoveredWithNothingPending()
        #expect(journal.failure == nil)
    }
}
