import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Logging
import Testing

@Suite("state store: expiry, a deleted database, one daemon per directory")
struct StateDatabaseFileTests {
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "beacond-state-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("expired events are dropped for every app and counted for DroppedBefore; the oldest time is reported")
    func expiry() throws {
        let store = try SQLiteStateDatabase.inMemory()
        try store.apply([
            .queueEvent(try SQLiteRegionStateTests.event(.didEnterRegion, "a", at: 100), limit: 10),
            .queueEvent(try SQLiteRegionStateTests.event(.didExitRegion, "a", at: 200, app: "org.example.Other"), limit: 10),
            .queueEvent(try SQLiteRegionStateTests.event(.didExitRegion, "a", at: 300), limit: 10),
        ])
        #expect(try store.oldestQueuedEventTime() == Timestamp(microsecondsSinceEpoch: 100))
        let dropped = try store.dropExpiredQueuedEvents(before: Timestamp(microsecondsSinceEpoch: 250))
        #expect(dropped == ["org.example.Demo": 1, "org.example.Other": 1])
        #expect(try store.oldestQueuedEventTime() == Timestamp(microsecondsSinceEpoch: 300))
        let demo = try store.queuedEvents(of: "org.example.Demo", expiredBefore: Timestamp(microsecondsSinceEpoch: 0))
        #expect(demo.events.map(\.timestamp.microsecondsSinceEpoch) == [300])
        #expect(demo.dropped == 1)
        #expect(try store.dropExpiredQueuedEvents(before: Timestamp(microsecondsSinceEpoch: 250)).isEmpty)
    }

    @Test("a deleted database file is noticed, and its state can be written to a new file at the same path")
    func deletedDatabase() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStateDatabase(directory: directory)
        try store.apply([.saveRegion(try SQLiteRegionStateTests.stored(1, "lobby", state: .inside, seen: 5))])
        #expect(store.fileProblem() == nil)
        try FileManager.default.removeItem(atPath: directory)
        let problem = try #require(store.fileProblem())
        #expect(problem.message.contains("deleted"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try store.copy(to: store.file)
        let reopened = try SQLiteStateDatabase(directory: directory)
        #expect(reopened.fileProblem() == nil)
        #expect(try reopened.loadRegions().regions.map(\.monitored.region.identifier) == ["lobby"])
        #expect(store.fileProblem()?.message.contains("replaced") == true)
    }

    @Test("one lock per state directory: a second is refused naming the holder, free again once released")
    func lock() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var first: StateDirectoryLock? = try StateDirectoryLock(directory: directory)
        #expect(first != nil)
        #expect {
            _ = try StateDirectoryLock(directory: directory)
        } throws: { error in
            "\(error)".contains("another beacond (pid \(getpid())) uses this state directory")
        }
        first = nil
        _ = try StateDirectoryLock(directory: directory)
    }

    @Test("closing the state file folds the write-ahead log into the database, then frees the directory; later writes say why they fail")
    func close() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let stateDatabase = try StateDatabaseFile(directory: directory, logger: logger)
        try stateDatabase.save(AuthorizationRecord(status: .authorizedAlways), for: "org.example.Demo")
        let log = stateDatabase.file + "-wal"
        #expect(FileManager.default.fileExists(atPath: log), "nothing in the log: this test would prove nothing")
        try stateDatabase.close()
        #expect(!FileManager.default.fileExists(atPath: log))
        _ = try StateDirectoryLock(directory: directory)
        try stateDatabase.close() // a second close does nothing
        #expect {
            try stateDatabase.save(AuthorizationRecord(status: .denied), for: "org.example.Demo")
        } throws: { error in
            "\(error)".contains("the state database is closed: beacond is stopping")
        }
        let reopened = try SQLiteStateDatabase(directory: directory)
        #expect(try reopened.loadAll()["org.example.Demo"]?.status == .authorizedAlways)
    }
}
