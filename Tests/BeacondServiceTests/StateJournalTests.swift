import BeaconKit
@testable import BeacondService
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

    static func stored(_ identifier: String, client: Int = 1) throws -> StoredRegion {
        StoredRegion(client: client, appID: "org.example.A", monitored: try monitored(identifier, .unknown))
    }

    /// Structural changes in order, then each marked region as the engine has it at commit time (not as it was
    /// when marked), once per region however often it changed; ranging keys and regions gone are not written.
    @Test func aBatchHoldsChangesThenCurrentRegionStates() throws {
        var journal = StateJournal()
        let empty = journal.batch { _ in nil }
        #expect(empty == nil)
        let lobby = try Self.stored("lobby")
        journal.record(.saveRegion(lobby))
        journal.record(.removeRegion(client: 1, identifier: "old"))
        let key = EngineKey.region(client: 1, identifier: "lobby")
        let marked = [journal.markRegionChanged(key), journal.markRegionChanged(key),
                      journal.markRegionChanged(.ranging(client: 1, constraint: try BeaconIdentityConstraint(uuid: Self.uuid)))]
        #expect(marked == [true, false, false])
        journal.markRegionChanged(.region(client: 9, identifier: "gone"))
        let inside = try Self.monitored("lobby", .inside)
        let batch = journal.batch { $0 == key ? inside : nil }
        #expect(batch == [.saveRegion(lobby), .removeRegion(client: 1, identifier: "old"),
                          .updateRegionState(client: 1, identifier: "lobby", inside)])
        #expect(journal.changeCount == 2)
        let ended = journal.committed()
        #expect(ended == nil)
        #expect(journal.isEmpty)
        let after = journal.batch { _ in inside }
        #expect(after == nil)
    }

    /// A failed write keeps everything for the retry and says the failure is new only once; the success that
    /// follows ends it (for the log) and clears the journal.
    @Test func aFailedCommitKeepsTheChangesUntilOneSucceeds() throws {
        var journal = StateJournal()
        journal.record(.removeClient(1))
        _ = journal.batch { _ in nil }
        let first = journal.commitFailed("disk full")
        #expect(first == (dropped: 0, isNew: true))
        journal.record(.removeClient(2))
        let retry = journal.batch { _ in nil }
        #expect(retry == [.removeClient(1), .removeClient(2)])
        let second = journal.commitFailed("disk full")
        #expect(second == (dropped: 0, isNew: false))
        #expect(journal.failure == StateJournal.Failure(reason: "disk full", pending: 2))
        let ended = journal.committed()
        #expect(ended == StateJournal.Failure(reason: "disk full", pending: 2))
        #expect(journal.failure == nil)
        #expect(journal.isEmpty)
    }

    /// A long outage cannot grow memory without bound: beyond the limit the oldest changes go.
    @Test func anOutageKeepsAtMostTheLimit() throws {
        var journal = StateJournal(maximumUnsavedChanges: 3)
        for client in 1...5 { journal.record(.removeClient(client)) }
        let outcome = journal.commitFailed("read-only file system")
        #expect(outcome.dropped == 2)
        let kept = journal.batch { _ in nil }
        #expect(kept == [.removeClient(3), .removeClient(4), .removeClient(5)])
        #expect(journal.failure?.pending == 3)
        #expect(journal.changeCount == 5)
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
        let before = journal.batch { _ in nil }
        #expect(before == [.removeClient(3)])
        _ = journal.committed()
        #expect(journal.wasSent(queuedEvent: 7))
        let sent = [journal.signalsSent(), journal.signalsSent()]
        #expect(sent == [true, false])
        let removal = journal.batch { _ in nil }
        #expect(removal == [.removeQueuedEvents(appID: "org.example.A", ids: [7, 8])])
        _ = journal.commitFailed("disk full")
        #expect(journal.wasSent(queuedEvent: 7))
        _ = journal.committed()
        #expect(!journal.wasSent(queuedEvent: 7))
    }

    /// The database file lost outside a commit: reported once; over without a commit only when nothing waits.
    @Test func aLostFileIsReportedOnceAndEndsWhenNothingWaits() throws {
        var journal = StateJournal()
        let reported = [journal.failed("the state database was deleted"), journal.failed("the state database was deleted")]
        #expect(reported == [true, false])
        journal.record(.removeClient(1))
        journal.recoveredWithNothingPending()
        #expect(journal.failure != nil)
        _ = journal.committed()
        journal.failed("again")
        journal.recoveredWithNothingPending()
        #expect(journal.failure == nil)
    }
}
