import BeaconKit
import GRDB
public import BeacondCore

extension SQLiteStateDatabase {
    /// One transaction at the durability asked for. The level is the connection's, so every write sets its own
    /// rather than relying on a reset after the last one (a reset that failed unnoticed would leave later
    /// acknowledged writes unsynced). A FULL commit also syncs every NORMAL one before it.
    func write<T>(_ durability: StateDurability, _ body: (Database) throws -> T) throws -> T {
        try database.writeWithoutTransaction { db in
            try db.execute(sql: durability == .powerLoss ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            var result: T?
            try db.inTransaction {
                result = try body(db)
                return .commit
            }
            guard let result else { throw DatabaseError(message: "the transaction returned nothing") }
            return result
        }
    }

    /// Commits `changes` in one transaction (nothing of them is applied if it fails), as durable as asked.
    public func apply(_ changes: [StateChange], durability: StateDurability = .powerLoss) throws(StateDatabaseError) {
        guard !changes.isEmpty else { return }
        do {
            try write(durability) { db in
                for change in changes { try Self.apply(change, in: db) }
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "save monitored regions and queued events")
        }
    }

    private static func apply(_ change: StateChange, in db: Database) throws {
        switch change {
        case .saveRegion(let stored):
            let region = stored.monitored.region
            try db.execute(
                sql: """
                    INSERT INTO monitored_region (client, app_id, identifier, uuid, major, minor,
                        notify_on_entry, notify_on_exit, state, last_determined_state, last_seen_us, enter_rssi, absent_rssi,
                        heard_by, room, entry_delay_us, exit_delay_us, beacon_kind, device)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (client, identifier) DO UPDATE SET
                        app_id = excluded.app_id, uuid = excluded.uuid,
                        major = excluded.major, minor = excluded.minor, notify_on_entry = excluded.notify_on_entry,
                        notify_on_exit = excluded.notify_on_exit, state = excluded.state,
                        last_determined_state = excluded.last_determined_state, last_seen_us = excluded.last_seen_us,
                        enter_rssi = excluded.enter_rssi, absent_rssi = excluded.absent_rssi, heard_by = excluded.heard_by,
                        room = excluded.room, entry_delay_us = excluded.entry_delay_us, exit_delay_us = excluded.exit_delay_us,
                        beacon_kind = excluded.beacon_kind, device = excluded.device
                    """,
                arguments: [
                    stored.client, stored.appID, region.identifier,
                    region.constraint.uuid.uuidString, region.constraint.major.map { Int($0) },
                    region.constraint.minor.map { Int($0) }, region.notifyOnEntry, region.notifyOnExit,
                    stored.monitored.state.rawValue, stored.monitored.lastDeterminedState.rawValue,
                    stored.monitored.lastSeen?.microsecondsSinceEpoch,
                    region.hysteresis?.enterAtOrAbove, region.hysteresis?.absentBelow, stored.heardBy?.json,
                    region.room, region.entryDelay?.wholeMicroseconds, region.exitDelay?.wholeMicroseconds,
                    region.constraint.kind.name, region.constraint.deviceName,
                ])
        case .updateRegionState(let client, let identifier, let monitored, let heardBy):
            try db.execute(
                sql: """
                    UPDATE monitored_region SET state = ?, last_determined_state = ?, last_seen_us = ?, heard_by = ?
                    WHERE client = ? AND identifier = ?
                    """,
                arguments: [
                    monitored.state.rawValue, monitored.lastDeterminedState.rawValue,
                    monitored.lastSeen?.microsecondsSinceEpoch, heardBy?.json, client, identifier,
                ])
        case .removeRegion(let client, let identifier):
            try db.execute(
                sql: "DELETE FROM monitored_region WHERE client = ? AND identifier = ?",
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
}
