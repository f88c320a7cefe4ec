import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Testing

@Suite("authorization store")
struct SQLiteStateDatabaseTests {
    /// One record of each shape the rules produce.
    private static let records: [String: AuthorizationRecord] = [
        "org.example.Pending": AuthorizationRecord(status: .notDetermined, pendingRequest: .always),
        "org.example.WhenInUse": AuthorizationRecord(
            status: .authorizedWhenInUse, upgradeRequestUsed: true,
            pendingRequest: .always),
        "org.example.Always": AuthorizationRecord(status: .authorizedAlways, upgradeRequestUsed: true),
        "org.example.Denied": AuthorizationRecord(status: .denied),
        "org.example.Restricted": AuthorizationRecord(status: .restricted),
        "org.example.Waiting": AuthorizationRecord(status: .notDetermined, pendingRequest: .whenInUse),
    ]

    @Test("records round-trip, and a save replaces the earlier record")
    func roundTrip() throws {
        let store = try SQLiteStateDatabase.inMemory()
        #expect(try store.loadAll().isEmpty)
        for (appID, record) in Self.records { try store.save(record, for: appID) }
        #expect(try store.loadAll() == Self.records)
        try store.save(AuthorizationRecord(status: .denied, upgradeRequestUsed: true), for: "org.example.Always")
        #expect(
            try store.loadAll()["org.example.Always"]
                == AuthorizationRecord(status: .denied, upgradeRequestUsed: true))
        #expect(try store.loadAll().count == Self.records.count)
    }

    @Test("every status is stored and read back", arguments: AuthorizationStatus.allCases)
    func statuses(_ status: AuthorizationStatus) throws {
        let store = try SQLiteStateDatabase.inMemory()
        try store.save(AuthorizationRecord(status: status), for: "app")
        #expect(try store.loadAll() == ["app": AuthorizationRecord(status: status)])
    }

    @Test("remove forgets one app only, and removing an unknown app is not an error")
    func remove() throws {
        let store = try SQLiteStateDatabase.inMemory()
        for (appID, record) in Self.records { try store.save(record, for: appID) }
        try store.remove(appID: "org.example.Denied")
        try store.remove(appID: "org.example.NeverSeen")
        var expected = Self.records
        expected["org.example.Denied"] = nil
        #expect(try store.loadAll() == expected)
    }

    @Test("records survive closing and reopening the store, in WAL mode with synchronous = FULL")
    func persistence() throws {
        let directory = try ConfigurationDirectory()
        let stateDirectory = directory.path + "/state/nested"
        do {
            let store = try SQLiteStateDatabase(directory: stateDirectory)
            #expect(store.file == stateDirectory + "/state.sqlite")
            #expect(store.recoveryNote == nil)
            let settings = try store.durabilitySettings()
            #expect(settings.journalMode == "wal")
            #expect(settings.synchronous == 2) // FULL
            for (appID, record) in Self.records { try store.save(record, for: appID) }
            try store.remove(appID: "org.example.Restricted")
        }
        var expected = Self.records
        expected["org.example.Restricted"] = nil
        let reopened = try SQLiteStateDatabase(directory: stateDirectory)
        #expect(reopened.recoveryNote == nil)
        #expect(try reopened.loadAll() == expected)
        #expect(FileManager.default.fileExists(atPath: stateDirectory + "/state.sqlite"))
    }

    @Test("a file that is not SQLite is moved aside, the store starts empty and says so")
    func garbageFileMovedAside() throws {
        let directory = try ConfigurationDirectory()
        let garbage = Data(String(repeating: "this is not an SQLite database\n", count: 200).utf8)
        try garbage.write(to: URL(fileURLWithPath: directory.path + "/state.sqlite"))
        let store = try SQLiteStateDatabase(directory: directory.path)
        let note = try #require(store.recoveryNote)
        #expect(note.contains(directory.path + "/state.sqlite.corrupt-"))
        #expect(try store.loadAll().isEmpty)
        try store.save(AuthorizationRecord(status: .authorizedAlways), for: "app")
        #expect(try store.loadAll()["app"]?.status == .authorizedAlways)
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("state.sqlite.corrupt-") }
        #expect(aside.count == 1)
        let kept = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/" + (aside.first ?? "")))
        #expect(kept == garbage)
    }

    @Test("a database with damaged pages fails the integrity check and is moved aside")
    func damagedPagesMovedAside() throws {
        let directory = try ConfigurationDirectory()
        do {
            let store = try SQLiteStateDatabase(directory: directory.path)
            for index in 0..<300 {
                try store.save(AuthorizationRecord(status: .denied), for: "org.example.App\(index)")
            }
        }
        // Checkpointed on close: the rows are in the main file. Overwrite everything after the first page
        // (header and schema stay readable) with garbage.
        let file = directory.path + "/state.sqlite"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(bytes.count > 8_192)
        for index in 4_096..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: index &* 31) }
        try bytes.write(to: URL(fileURLWithPath: file))
        try? FileManager.default.removeItem(atPath: file + "-wal")
        try? FileManager.default.removeItem(atPath: file + "-shm")

        let store = try SQLiteStateDatabase(directory: directory.path)
        #expect(store.recoveryNote != nil)
        #expect(try store.loadAll().isEmpty)
    }

    @Test("a database that cannot be opened for another reason is an error and is never moved aside")
    func unopenableIsNotCorrupt() throws {
        let directory = try ConfigurationDirectory()
        try FileManager.default.createDirectory(
            atPath: directory.path + "/state.sqlite",
            withIntermediateDirectories: false)
        do {
            let store = try SQLiteStateDatabase(directory: directory.path)
            Issue.record("opened a directory as a database: \(store.file)")
        } catch {
            #expect(error.file == directory.path + "/state.sqlite")
            #expect(error.description.contains("cannot open the state database"))
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == ["state.sqlite"])
    }

    @Test("a state directory that cannot be created is an error naming it and the fix")
    func uncreatableDirectory() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("a file", to: "blocker")
        do {
            _ = try SQLiteStateDatabase(directory: directory.path + "/blocker/state")
            Issue.record("opened a store under a regular file")
        } catch {
            #expect(error.file == directory.path + "/blocker/state")
            #expect(error.description.contains("--state-dir"))
        }
    }
}
