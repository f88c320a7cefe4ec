public import BeaconKit
import Foundation
import GRDB

/// A monitored region as stored: whose it is and its monitor state. Rows load in the order they were first
/// saved (rowid order: an update keeps the row), which is the client's order of addition.
public struct StoredRegion: Hashable, Sendable {
    /// The client number (`/org/beacond/client/N`) that monitors it.
    public var client: Int
    public var appID: String
    public var monitored: MonitoredRegion

    public init(client: Int, appID: String, monitored: MonitoredRegion) {
        self.client = client
        self.appID = appID
        self.monitored = monitored
    }
}

/// One change to the durable state. The daemon gathers the changes one operation makes (a StartMonitoring, a
/// sighting that entered two regions) and commits them in one transaction before any signal about them leaves,
/// so what a client was told is on disk first.
public enum StateChange: Sendable, Hashable {
    /// Inserts or replaces a region with its state.
    case saveRegion(StoredRegion)
    /// A region's state, last determination and last sighting (the region row must exist; a missing one is
    /// left missing: the region was removed in the same batch).
    case updateRegionState(client: Int, identifier: String, MonitoredRegion)
    case removeRegion(client: Int, identifier: String)
    /// Every region of a client.
    case removeClient(Int)
    /// Queues an event for an app whose client is gone, dropping the app's oldest beyond `limit`.
    case queueEvent(QueuedRegionEvent, limit: Int)
    /// Forgets queued events that were delivered (by id).
    case removeQueuedEvents(appID: String, ids: [Int64])
}

/// How far a commit must get before it returns.
public enum StateDurability: Sendable {
    /// fsynced (`synchronous = FULL`): survives power loss. For what a caller was told in a method reply.
    case powerLoss
    /// Written to the file (`synchronous = NORMAL`, WAL): survives the daemon being killed or crashing at any
    /// moment, not a power cut before the kernel writes it back or the next fsynced commit. For what sightings
    /// change, so a region event does not wait for the disk (an fsync costs milliseconds, more on SD cards).
    case processCrash
}

extension StateStore {
    /// Commits `changes` in one transaction (nothing of them is applied if it fails), as durable as asked.
    public func apply(_ changes: [StateChange], durability: StateDurability = .powerLoss) throws(StateStoreError) {
        guard !changes.isEmpty else { return }
        do {
            try database.writeWithoutTransaction { db in
                // Per commit: the level is the connection's, and a FULL commit also syncs every NORMAL one before it.
                try db.execute(sql: durability == .powerLoss ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
                defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
                try db.inTransaction {
                    for change in changes { try Self.apply(change, in: db) }
                    return .commit
                }
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "save monitored regions and queued events")
        }
    }

    private static func apply(_ change: StateChange, in db: Database) throws {
        switch change {
        case .saveRegion(let stored):
            let region = stored.monitored.region
            try db.execute(sql: """
                INSERT INTO monitored_region (client, app_id, identifier, uuid, major, minor,
                    notify_on_entry, notify_on_exit, state, last_determined_state, last_seen_us)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (client, identifier) DO UPDATE SET
                    app_id = excluded.app_id, uuid = excluded.uuid,
                    major = excluded.major, minor = excluded.minor, notify_on_entry = excluded.notify_on_entry,
                    notify_on_exit = excluded.notify_on_exit, state = excluded.state,
                    last_determined_state = excluded.last_determined_state, last_seen_us = excluded.last_seen_us
                """, arguments: [stored.client, stored.appID, region.identifier,
                                 region.constraint.uuid.uuidString, region.constraint.major.map { Int($0) },
                                 region.constraint.minor.map { Int($0) }, region.notifyOnEntry, region.notifyOnExit,
                                 stored.monitored.state.rawValue, stored.monitored.lastDeterminedState.rawValue,
                                 stored.monitored.lastSeen?.microsecondsSinceEpoch])
        case .updateRegionState(let client, let identifier, let monitored):
            try db.execute(sql: """
                UPDATE monitored_region SET state = ?, last_determined_state = ?, last_seen_us = ?
                WHERE client = ? AND identifier = ?
                """, arguments: [monitored.state.rawValue, monitored.lastDeterminedState.rawValue,
                                 monitored.lastSeen?.microsecondsSinceEpoch, client, identifier])
        case .removeRegion(let client, let identifier):
            try db.execute(sql: "DELETE FROM monitored_region WHERE client = ? AND identifier = ?",
                           arguments: [client, identifier])
        case .removeClient(let client):
            try db.execute(sql: "DELETE FROM monitored_region WHERE client = ?", arguments: [client])
        case .queueEvent(let event, let limit):
            try queue(event, limit: limit, in: db)
        case .removeQueuedEvents(let appID, let ids):
            for id in ids {
                try db.execute(sql: "DELETE FROM queued_event WHERE id = ? AND app_id = ?", arguments: [id, appID])
            }
            try db.execute(sql: "DELETE FROM queued_event_drop WHERE app_id = ?", arguments: [appID])
        }
    }

    /// Every stored region, by client then order of addition, and the rows that could not be read (each with why), so
    /// the daemon can log them and go on with the rest.
    public func loadRegions() throws(StateStoreError) -> (regions: [StoredRegion], problems: [String]) {
        let rows: [Row]
        do {
            rows = try database.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM monitored_region ORDER BY client, rowid")
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "read the monitored regions")
        }
        var regions: [StoredRegion] = []
        var problems: [String] = []
        for row in rows {
            let client: Int = row["client"]
            let identifier: String = row["identifier"]
            guard let region = Self.region(row),
                  let state = RegionState(rawValue: row["state"]),
                  let last = RegionState(rawValue: row["last_determined_state"]) else {
                problems.append("region \(identifier) of client \(client) has a value beacond cannot read; it was skipped")
                continue
            }
            let seen: Int64? = row["last_seen_us"]
            regions.append(StoredRegion(
                client: client, appID: row["app_id"],
                monitored: MonitoredRegion(region: region, state: state,
                                           lastSeen: seen.map(Timestamp.init(microsecondsSinceEpoch:)),
                                           lastDeterminedState: last)))
        }
        return (regions, problems)
    }

    /// The highest client number any stored row uses (0 if none): new clients are numbered above it, so a
    /// restored region is never mistaken for a new client's.
    public func highestStoredClient() throws(StateStoreError) -> Int {
        do {
            return try database.read { db in
                try Int.fetchOne(db, sql: "SELECT MAX(client) FROM monitored_region") ?? 0
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "read the monitored regions")
        }
    }

    /// A region from a row's region columns (`monitored_region` and `queued_event` share them); nil if the
    /// row holds values the daemon cannot use (a hand edit).
    static func region(_ row: Row) -> BeaconRegion? {
        let uuidText: String = row["uuid"]
        let major: Int? = row["major"]
        let minor: Int? = row["minor"]
        guard let uuid = UUID(uuidString: uuidText),
              let constraint = try? BeaconIdentityConstraint(uuid: uuid, major: major.flatMap(UInt16.init(exactly:)),
                                                             minor: minor.flatMap(UInt16.init(exactly:)))
        else { return nil }
        return BeaconRegion(identifier: row["identifier"], constraint: constraint,
                            notifyOnEntry: row["notify_on_entry"], notifyOnExit: row["notify_on_exit"])
    }
}
