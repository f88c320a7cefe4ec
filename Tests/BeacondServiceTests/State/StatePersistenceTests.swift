import BeaconKit
@testable import BeacondCore
@testable import BeacondService
import Foundation
import Logging
import Testing

/// `StatePersistence` alone, with no core: the journal and the real state database file, and what a commit asks of
/// the daemon (a flush, a retry timer, a log line) in its outbox.
@Suite("state persistence: the journal and the database, owned together")
struct StatePersistenceTests {
    static let origin = CoreHarness.origin

    static func stored(_ identifier: String, client: Int = 1) throws -> StoredRegion {
        let region = try CoreHarness.region(identifier)
        return StoredRegion(
            client: client, appID: "org.example.Door",
            monitored: MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown))
    }

    static func savedIdentifiers(_ persistence: StatePersistence) throws -> [String] {
        try persistence.loadRegions(perApp: .max).regions.map(\.monitored.region.identifier)
    }

    @Test("a change recorded asks for a flush and reaches the database only at the commit")
    func savedAtCommit() throws {
        let files = try ConcernFixture()
        var persistence = StatePersistence(database: files.database)
        var outbox = CoreOutbox(now: Self.origin)
        persistence.saveLater(.saveRegion(try Self.stored("lobby")), &outbox)
        #expect(outbox.take().contains { if case .scheduleFlush = $0 { true } else { false } })
        #expect(try Self.savedIdentifiers(persistence).isEmpty, "written before the commit")
        #expect(persistence.commit(.powerLoss, force: false, current: [:], &outbox) == nil)
        #expect(try Self.savedIdentifiers(persistence) == ["lobby"])
        #expect(outbox.take().isEmpty, "a commit that works says nothing")
    }

    @Test("a failed write keeps the changes, arms one retry and writes nothing until it is due; the retry saves them and says so")
    func failedWriteRetries() throws {
        let files = try ConcernFixture()
        var persistence = StatePersistence(database: files.database)
        var outbox = CoreOutbox(now: Self.origin)
        files.database.failsWrites = true
        persistence.saveLater(.saveRegion(try Self.stored("lobby")), &outbox)
        _ = outbox.take()
        #expect(persistence.commit(.powerLoss, force: false, current: [:], &outbox) == FailingStateDatabase.diskFull)
        #expect(outbox.armedTimers[.stateRetry] == Self.origin + StateJournal.firstRetryDelay)
        #expect(persistence.journal.failure?.pending == 1)
        let logged = outbox.take().compactMap { if case .log(_, let message, _) = $0 { message } else { nil } }
        #expect(logged.contains { $0.contains("cannot save state") })

        // The disk has room again, but the retry is not due: nothing is tried.
        files.database.failsWrites = false
        #expect(persistence.commit(.powerLoss, force: false, current: [:], &outbox) == FailingStateDatabase.diskFull)
        #expect(try Self.savedIdentifiers(persistence).isEmpty)

        persistence.retryIsDue()
        #expect(persistence.commit(.powerLoss, force: false, current: [:], &outbox) == nil)
        #expect(try Self.savedIdentifiers(persistence) == ["lobby"])
        #expect(outbox.armedTimers[.stateRetry] == nil)
        #expect(outbox.take().contains { if case .log(_, let message, _) = $0 { message.contains("writable again") } else { false } })
    }

    @Test("a region marked changed is read only when a write may happen, and its values are the commit's")
    func regionValuesAtCommit() throws {
        let files = try ConcernFixture()
        var persistence = StatePersistence(database: files.database)
        var outbox = CoreOutbox(now: Self.origin)
        let row = try Self.stored("lobby")
        persistence.saveLater(.saveRegion(row), &outbox)
        persistence.commit(.powerLoss, force: false, current: [:], &outbox)
        let key = EngineKey.region(client: 1, identifier: "lobby")
        persistence.markRegionChanged(key, &outbox)
        #expect(persistence.regionsToRead(force: false) == [key])
        var inside = row.monitored
        inside.state = .inside
        persistence.commit(.processCrash, force: false, current: [key: .init(monitored: inside, heardBy: nil)], &outbox)
        #expect(try persistence.loadRegions(perApp: .max).regions.first?.monitored.state == .inside)
        #expect(persistence.regionsToRead(force: false).isEmpty)

        files.database.failsWrites = true
        persistence.saveLater(.saveRegion(try Self.stored("hall")), &outbox)
        #expect(persistence.commit(.processCrash, force: false, current: [:], &outbox) != nil)
        persistence.markRegionChanged(key, &outbox)
        #expect(persistence.regionsToRead(force: false).isEmpty, "read while the retry is not due")
        #expect(persistence.regionsToRead(force: true) == [key])
    }
}
