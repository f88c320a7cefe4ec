import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import GRDB
import Testing

@Suite("state store: monitored regions and queued events")
struct SQLiteRegionStateTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func region(
        _ identifier: String, major: UInt16? = 1, minor: UInt16? = nil, entry: Bool = true,
        exit: Bool = true
    ) throws -> BeaconRegion {
        BeaconRegion(
            identifier: identifier, constraint: try BeaconIdentityConstraint(uuid: uuid, major: major, minor: minor),
            notifyOnEntry: entry, notifyOnExit: exit)
    }

    static func stored(
        _ client: Int, _ identifier: String, state: RegionState = .unknown, seen: Int64? = nil,
        app: String = "org.example.Demo"
    ) throws -> StoredRegion {
        StoredRegion(
            client: client, appID: app,
            monitored: MonitoredRegion(
                region: try region(identifier), state: state, lastSeen: seen.map(Timestamp.init(microsecondsSinceEpoch:)),
                lastDeterminedState: state))
    }

    static func event(
        _ kind: QueuedRegionEvent.Kind, _ identifier: String, at time: Int64,
        app: String = "org.example.Demo"
    ) throws -> QueuedRegionEvent {
        QueuedRegionEvent(
            appID: app, kind: kind, region: try region(identifier),
            timestamp: Timestamp(microsecondsSinceEpoch: time))
    }

    @Test("regions round-trip with their state, in each client's order of addition; updates keep the order")
    func regionsRoundTrip() throws {
        let store = try SQLiteStateDatabase.inMemory()
        let wide = StoredRegion(
            client: 3, appID: "org.example.Other",
            monitored: MonitoredRegion(
                region: try Self.region("wide", major: nil, entry: false), state: .outside, lastSeen: nil,
                lastDeterminedState: .inside))
        try store.apply([
            .saveRegion(try Self.stored(7, "zeta", state: .inside, seen: 42)),
            .saveRegion(try Self.stored(7, "alpha")), .saveRegion(wide),
        ])
        try store.apply([
            .updateRegionState(
                client: 7, identifier: "zeta",
                MonitoredRegion(
                    region: try Self.region("zeta"), state: .outside, lastSeen: Timestamp(microsecondsSinceEpoch: 99),
                    lastDeterminedState: .outside))
        ])
        let loaded = try store.loadRegions()
        #expect(loaded.problems.isEmpty)
        #expect(loaded.regions.map(\.monitored.region.identifier) == ["wide", "zeta", "alpha"])
        #expect(loaded.regions[0] == wide)
        #expect(loaded.regions[1].monitored.state == .outside)
        #expect(loaded.regions[1].monitored.lastSeen == Timestamp(microsecondsSinceEpoch: 99))
        #expect(try store.highestStoredClient() == 7)
    }

    @Test("a region's RSSI hysteresis round-trips in monitored regions and queued events; none stays none")
    func hysteresisRoundTrips() throws {
        let store = try SQLiteStateDatabase.inMemory()
        var door = try Self.region("door")
        door.hysteresis = try RSSIHysteresis(enterAtOrAbove: -60, absentBelow: -75)
        let stored = StoredRegion(
            client: 2, appID: "org.example.Demo",
            monitored: MonitoredRegion(
                region: door, state: .inside, lastSeen: Timestamp(microsecondsSinceEpoch: 5), lastDeterminedState: .inside))
        try store.apply([.saveRegion(stored), .saveRegion(try Self.stored(2, "plain"))])
        let loaded = try store.loadRegions()
        #expect(loaded.problems.isEmpty)
        #expect(loaded.regions.first { $0.monitored.region.identifier == "door" }?.monitored.region == door)
        #expect(loaded.regions.first { $0.monitored.region.identifier == "plain" }?.monitored.region.hysteresis == nil)
        let event = QueuedRegionEvent(
            appID: "org.example.Demo", kind: .didEnterRegion, region: door,
            timestamp: Timestamp(microsecondsSinceEpoch: 7))
        try store.apply([.queueEvent(event, limit: 10)])
        #expect(
            try store.queuedEvents(of: "org.example.Demo", expiredBefore: Timestamp(microsecondsSinceEpoch: 1))
                .events.first?.region == door)
    }

    @Test(
        "who heard a region (by room, and the rooms a blind region waits for) round-trips; NULL stays none; a hand edit is a problem, not a failure")
    func hearingsRoundTrip() throws {
        let store = try SQLiteStateDatabase.inMemory()
        let hearing = StoredHearing(local: 5, remote: ["kitchen": 10, "garage": 7], waitingFor: ["kitchen"])
        var moved = try Self.stored(4, "moved", state: .inside, seen: 10)
        moved.heardBy = StoredHearing(local: nil, remote: ["attic": 3], waitingFor: nil)
        try store.apply([
            .saveRegion(try Self.stored(4, "lobby", state: .unknown, seen: 10)), .saveRegion(moved),
            .saveRegion(try Self.stored(4, "plain")),
        ])
        try store.apply([
            .updateRegionState(
                client: 4, identifier: "lobby", try Self.stored(4, "lobby", state: .unknown, seen: 10).monitored,
                heardBy: hearing)
        ])
        var loaded = try store.loadRegions()
        #expect(loaded.problems.isEmpty)
        #expect(loaded.regions.map(\.heardBy) == [hearing, moved.heardBy, nil])
        try store.database.write { db in
            try db.execute(sql: "UPDATE monitored_region SET heard_by = '{\"remote\": 5}' WHERE identifier = 'lobby'")
        }
        loaded = try store.loadRegions()
        #expect(loaded.regions.count == 3 && loaded.regions[0].heardBy == nil)
        #expect(loaded.problems == ["region lobby of client 4 has a heard_by beacond cannot read; it resumes without it"])
    }

    @Test("hearings by room: each room keeps one number across regions; rooms not in ESPresense's form are left out")
    func hearingsByRoom() {
        var numbering: [String: ReceiverID] = [:]
        let first = StoredHearing.receiverRecord(
            StoredHearing(local: 1, remote: ["kitchen": 10, "Bad Room": 9], waitingFor: ["kitchen"]),
            numbering: &numbering)
        let second = StoredHearing.receiverRecord(
            StoredHearing(local: nil, remote: ["garage": 4, "kitchen": 8], waitingFor: nil),
            numbering: &numbering)
        #expect(numbering == ["kitchen": ReceiverID(rawValue: 1), "garage": ReceiverID(rawValue: 2)])
        #expect(first == ReceiverRecord(local: 1, remote: [ReceiverID(rawValue: 1): 10], waitingFor: [ReceiverID(rawValue: 1)]))
        #expect(second == ReceiverRecord(local: nil, remote: [ReceiverID(rawValue: 1): 8, ReceiverID(rawValue: 2): 4], waitingFor: nil))
        let rooms = [ReceiverID(rawValue: 1): "kitchen", ReceiverID(rawValue: 2): "garage"]
        #expect(
            StoredHearing.of(first, rooms: rooms, exitTimeout: .seconds(30))
                == StoredHearing(local: 1, remote: ["kitchen": 10], waitingFor: ["kitchen"]))
        // Only this node's scanner heard it: nothing to save.
        #expect(
            StoredHearing.of(
                ReceiverRecord(local: 3, remote: [:], waitingFor: nil), rooms: rooms,
                exitTimeout: .seconds(30)) == nil)
        // More than exit_timeout before the latest hearing: left out, unless a blind region waits for it.
        let old = ReceiverRecord(
            local: 100_000_000, remote: [ReceiverID(rawValue: 1): 10_000_000, ReceiverID(rawValue: 2): 80_000_000],
            waitingFor: nil)
        #expect(
            StoredHearing.of(old, rooms: rooms, exitTimeout: .seconds(30))
                == StoredHearing(local: 100_000_000, remote: ["garage": 80_000_000], waitingFor: nil))
        var blind = old
        blind.waitingFor = [ReceiverID(rawValue: 1)]
        #expect(
            StoredHearing.of(blind, rooms: rooms, exitTimeout: .seconds(30))
                == StoredHearing(local: 100_000_000, remote: ["kitchen": 10_000_000, "garage": 80_000_000], waitingFor: ["kitchen"]))
    }

    @Test("removing a region or a client removes only that; an update of a removed region does nothing")
    func removal() throws {
        let store = try SQLiteStateDatabase.inMemory()
        try store.apply([
            .saveRegion(try Self.stored(1, "a")), .saveRegion(try Self.stored(1, "b")),
            .saveRegion(try Self.stored(2, "a")),
        ])
        try store.apply([
            .removeRegion(client: 1, identifier: "a"),
            .updateRegionState(client: 1, identifier: "a", try Self.stored(1, "a", state: .inside).monitored),
        ])
        #expect(try store.loadRegions().regions.map { "\($0.client)/\($0.monitored.region.identifier)" } == ["1/b", "2/a"])
        try store.apply([.removeClient(1)])
        #expect(try store.loadRegions().regions.map(\.client) == [2])
    }

    @Test("a batch is one transaction: a failing change leaves none of the batch applied")
    func atomicBatch() throws {
        let store = try SQLiteStateDatabase.inMemory()
        let bad = QueuedRegionEvent(
            appID: "org.example.Demo", kind: .didEnterRegion, region: try Self.region("x"),
            timestamp: Timestamp(microsecondsSinceEpoch: 1))
        // A region row with an out-of-range client violates the table's CHECK, after a good change in the batch.
        var broken = try Self.stored(1, "b")
        broken.client = 0
        #expect(throws: StateDatabaseError.self) {
            try store.apply([.saveRegion(try Self.stored(1, "a")), .queueEvent(bad, limit: 10), .saveRegion(broken)])
        }
        #expect(try store.loadRegions().regions.isEmpty)
        #expect(try store.queuedEventCounts().isEmpty)
    }

    @Test("every write sets its own level: a decision after an engine commit (no fsync) is written at synchronous = FULL")
    func durabilityLevelIsPerWrite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-sync-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStateDatabase(directory: directory.path)
        try store.apply([.saveRegion(try Self.stored(1, "a"))], durability: .processCrash)
        #expect(try store.durabilitySettings().synchronous == 1)
        try store.save(AuthorizationRecord(status: .authorizedAlways), for: "org.example.App")
        #expect(try store.durabilitySettings().synchronous == 2)
        try store.apply([.saveRegion(try Self.stored(1, "b"))], durability: .processCrash)
        try store.saveLocationServicesSwitch(false)
        #expect(try store.durabilitySettings().synchronous == 2)
        try store.apply([.saveRegion(try Self.stored(1, "c"))], durability: .powerLoss)
        #expect(try store.durabilitySettings().synchronous == 2)
        #expect(try store.loadRegions().regions.count == 3)
    }

    @Test("queued events come back oldest first; beyond the limit the oldest are dropped and counted")
    func queueBound() throws {
        let store = try SQLiteStateDatabase.inMemory()
        let kinds: [QueuedRegionEvent.Kind] = [.didEnterRegion, .didExitRegion]
        for index in 0..<7 {
            try store.apply([.queueEvent(try Self.event(kinds[index % 2], "lobby", at: Int64(100 + index)), limit: 3)])
        }
        try store.apply([.queueEvent(try Self.event(.didEnterRegion, "lobby", at: 5, app: "org.example.Other"), limit: 3)])
        let queued = try store.queuedEvents(of: "org.example.Demo", expiredBefore: Timestamp(microsecondsSinceEpoch: 0))
        #expect(queued.events.map(\.timestamp.microsecondsSinceEpoch) == [104, 105, 106])
        #expect(queued.events.map(\.kind) == [.didEnterRegion, .didExitRegion, .didEnterRegion])
        #expect(queued.dropped == 4)
        #expect(try store.queuedEventCounts() == ["org.example.Demo": 3, "org.example.Other": 1])
        // Delivered: removed, and the drop count starts again.
        try store.apply([.removeQueuedEvents(appID: "org.example.Demo", ids: queued.events.map(\.id))])
        let after = try store.queuedEvents(of: "org.example.Demo", expiredBefore: Timestamp(microsecondsSinceEpoch: 0))
        #expect(after.events.isEmpty && after.dropped == 0)
        #expect(try store.queuedEventCounts() == ["org.example.Other": 1])
    }

    @Test("events older than the time to live are dropped and counted when the queue is read")
    func queueTTL() throws {
        let store = try SQLiteStateDatabase.inMemory()
        for time: Int64 in [10, 20, 30, 40] {
            try store.apply([.queueEvent(try Self.event(.didEnterRegion, "lobby", at: time), limit: 100)])
        }
        let queued = try store.queuedEvents(of: "org.example.Demo", expiredBefore: Timestamp(microsecondsSinceEpoch: 25))
        #expect(queued.events.map(\.timestamp.microsecondsSinceEpoch) == [30, 40])
        #expect(queued.dropped == 2)
        // Reading again without delivering: the same events, the count kept.
        let again = try store.queuedEvents(of: "org.example.Demo", expiredBefore: Timestamp(microsecondsSinceEpoch: 25))
        #expect(again == queued)
    }

    @Test("regions and queued events survive reopening the file; a hand-edited row is skipped, not fatal")
    func survivesReopen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-regions-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try SQLiteStateDatabase(directory: directory.path)
            try store.apply([
                .saveRegion(try Self.stored(4, "lobby", state: .inside, seen: 1_000)),
                .saveRegion(try Self.stored(4, "desk")),
                .queueEvent(try Self.event(.didExitRegion, "lobby", at: 2_000), limit: 10),
            ])
        }
        // Another program writes a UUID beacond cannot read.
        let database = try DatabaseQueue(path: directory.appendingPathComponent(SQLiteStateDatabase.databaseFileName).path)
        try database.write { db in
            try db.execute(sql: "UPDATE monitored_region SET uuid = 'not-a-uuid' WHERE identifier = 'desk'")
        }
        try database.close()
        let reopened = try SQLiteStateDatabase(directory: directory.path)
        let loaded = try reopened.loadRegions()
        #expect(loaded.regions == [try Self.stored(4, "lobby", state: .inside, seen: 1_000)])
        #expect(loaded.problems.count == 1 && loaded.problems[0].contains("desk"))
        let queued = try reopened.queuedEvents(of: "org.example.Demo", expiredBefore: Timestamp(microsecondsSinceEpoch: 0))
        #expect(queued.events.map(\.kind) == [.didExitRegion])
        #expect(queued.events.first?.timestamp == Timestamp(microsecondsSinceEpoch: 2_000))
    }
}
