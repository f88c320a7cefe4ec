public import BeaconKit
import GRDB
public import BeacondCore

extension SQLiteStateDatabase {
    static func queue(_ event: QueuedRegionEvent, limit: Int, in db: Database) throws {
        let region = event.region
        try db.execute(
            sql: """
                INSERT INTO queued_event (app_id, kind, identifier, uuid, major, minor, notify_on_entry, notify_on_exit,
                    timestamp_us, enter_rssi, absent_rssi, room, entry_delay_us, exit_delay_us, beacon_kind, device)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                event.appID, event.kind.rawValue, region.identifier, region.constraint.uuid.uuidString,
                region.constraint.major.map { Int($0) }, region.constraint.minor.map { Int($0) },
                region.notifyOnEntry, region.notifyOnExit, event.timestamp.microsecondsSinceEpoch,
                region.hysteresis?.enterAtOrAbove, region.hysteresis?.absentBelow,
                region.room, region.entryDelay?.wholeMicroseconds, region.exitDelay?.wholeMicroseconds,
                region.constraint.kind.name, region.constraint.deviceName,
            ])
        let count =
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM queued_event WHERE app_id = ?",
                arguments: [event.appID]) ?? 0
        let excess = count - max(limit, 1)
        guard excess > 0 else { return }
        try db.execute(
            sql: """
                DELETE FROM queued_event WHERE id IN
                    (SELECT id FROM queued_event WHERE app_id = ? ORDER BY id LIMIT ?)
                """, arguments: [event.appID, excess])
        try countDropped(excess, appID: event.appID, in: db)
    }

    static func countDropped(_ count: Int, appID: String, in db: Database) throws {
        guard count > 0 else { return }
        try db.execute(
            sql: """
                INSERT INTO queued_event_drop (app_id, dropped) VALUES (?, ?)
                ON CONFLICT (app_id) DO UPDATE SET dropped = dropped + excluded.dropped
                """, arguments: [appID, count])
    }

    /// `appID`'s queue, after dropping (and counting) the events that happened before `expiredBefore`. The
    /// events stay queued until the daemon has sent them and removes them (`StateChange.removeQueuedEvents`),
    /// so a crash in between delivers them again rather than losing them.
    public func queuedEvents(of appID: String, expiredBefore: Timestamp) throws(StateDatabaseError) -> QueuedEvents {
        do {
            return try write(.powerLoss) { db in
                let expired =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT COUNT(*) FROM queued_event WHERE app_id = ? AND timestamp_us < ?
                            """, arguments: [appID, expiredBefore.microsecondsSinceEpoch]) ?? 0
                if expired > 0 {
                    try db.execute(
                        sql: "DELETE FROM queued_event WHERE app_id = ? AND timestamp_us < ?",
                        arguments: [appID, expiredBefore.microsecondsSinceEpoch])
                    try Self.countDropped(expired, appID: appID, in: db)
                }
                let rows = try Row.fetchAll(
                    db, sql: "SELECT * FROM queued_event WHERE app_id = ? ORDER BY id",
                    arguments: [appID])
                var events: [QueuedRegionEvent] = []
                var unreadable = 0
                for row in rows {
                    guard let region = Self.region(row),
                        let kind = QueuedRegionEvent.Kind(rawValue: row["kind"])
                    else {
                        unreadable += 1
                        try db.execute(sql: "DELETE FROM queued_event WHERE id = ?", arguments: [row["id"] as Int64])
                        continue
                    }
                    events.append(
                        QueuedRegionEvent(
                            id: row["id"], appID: appID, kind: kind, region: region,
                            timestamp: Timestamp(microsecondsSinceEpoch: row["timestamp_us"])))
                }
                try Self.countDropped(unreadable, appID: appID, in: db)
                let dropped =
                    try Int.fetchOne(
                        db, sql: "SELECT dropped FROM queued_event_drop WHERE app_id = ?",
                        arguments: [appID]) ?? 0
                return QueuedEvents(events: events, dropped: dropped)
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "read the events queued for \(appID)")
        }
    }

    /// Drops (and counts, so the app's next client hears `DroppedBefore`) every queued event that happened before
    /// `expiredBefore`, whatever its app: `queue_ttl` holds whether or not the app ever comes back. Returns how
    /// many were dropped per app.
    public func dropExpiredQueuedEvents(before expiredBefore: Timestamp) throws(StateDatabaseError) -> [String: Int] {
        do {
            return try write(.powerLoss) { db in
                var dropped: [String: Int] = [:]
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT app_id, COUNT(*) AS n FROM queued_event WHERE timestamp_us < ? GROUP BY app_id
                        """, arguments: [expiredBefore.microsecondsSinceEpoch])
                {
                    dropped[row["app_id"]] = row["n"]
                }
                try db.execute(
                    sql: "DELETE FROM queued_event WHERE timestamp_us < ?",
                    arguments: [expiredBefore.microsecondsSinceEpoch])
                for (appID, count) in dropped { try Self.countDropped(count, appID: appID, in: db) }
                return dropped
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "drop the queued events older than queue_ttl")
        }
    }

    /// When the oldest queued event happened (nil when nothing is queued): the next one `queue_ttl` expires.
    public func oldestQueuedEventTime() throws(StateDatabaseError) -> Timestamp? {
        do {
            return try database.read { db in
                try Int64.fetchOne(db, sql: "SELECT MIN(timestamp_us) FROM queued_event")
                    .map(Timestamp.init(microsecondsSinceEpoch:))
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "read the queued events")
        }
    }

    /// How many events are queued per app (for status).
    public func queuedEventCounts() throws(StateDatabaseError) -> [String: Int] {
        do {
            return try database.read { db in
                var counts: [String: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT app_id, COUNT(*) AS n FROM queued_event GROUP BY app_id") {
                    counts[row["app_id"]] = row["n"]
                }
                return counts
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "count the queued events")
        }
    }
}
