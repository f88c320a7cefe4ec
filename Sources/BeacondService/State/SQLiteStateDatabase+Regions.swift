import BeaconKit
import Foundation
import GRDB
public import BeacondCore

extension SQLiteStateDatabase {
    /// Every stored region, by client then order of addition, and the rows that could not be read (each with why), so
    /// the daemon can log them and go on with the rest.
    ///
    /// At most `perApp` regions of each app are read, its first saved ones: a restart loads a bounded state
    /// whatever the file holds (80,000 rows once took a daemon to 236 MB at start). `trimRegions` removes the rest.
    public func loadRegions(perApp: Int = .max) throws(StateDatabaseError) -> (regions: [StoredRegion], problems: [String]) {
        let rows: [Row]
        do {
            // `place` follows (client, rowid) within an app, and a client has one app: ordering by it keeps each
            // client's order of addition (the subquery has no rowid of its own to order by).
            rows = try database.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY app_id ORDER BY client, rowid) AS place
                                       FROM monitored_region)
                        WHERE place <= ? ORDER BY client, place
                        """, arguments: [perApp])
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
                let last = RegionState(rawValue: row["last_determined_state"])
            else {
                problems.append("region \(identifier) of client \(client) has a value beacond cannot read; it was skipped")
                continue
            }
            let seen: Int64? = row["last_seen_us"]
            let heardText: String? = row["heard_by"]
            let heardBy = heardText.flatMap(StoredHearing.init(json:))
            if heardText != nil, heardBy == nil {
                problems.append("region \(identifier) of client \(client) has a heard_by beacond cannot read; it resumes without it")
            }
            regions.append(
                StoredRegion(
                    client: client, appID: row["app_id"],
                    monitored: MonitoredRegion(
                        region: region, state: state,
                        lastSeen: seen.map(Timestamp.init(microsecondsSinceEpoch:)),
                        lastDeterminedState: last),
                    heardBy: heardBy))
        }
        return (regions, problems)
    }

    /// Removes each app's regions beyond its first `perApp` saved ones (those `loadRegions(perApp:)` leaves out),
    /// and says how many went, by app.
    public func trimRegions(perApp: Int) throws(StateDatabaseError) -> [String: Int] {
        do {
            return try write(.powerLoss) { db in
                let excess = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT app_id, COUNT(*) - ? AS excess FROM monitored_region GROUP BY app_id HAVING COUNT(*) > ?
                        """, arguments: [perApp, perApp])
                guard !excess.isEmpty else { return [:] }
                try db.execute(
                    sql: """
                        DELETE FROM monitored_region WHERE rowid IN (
                            SELECT rowid FROM (SELECT rowid, ROW_NUMBER() OVER (PARTITION BY app_id ORDER BY client, rowid) AS place
                                               FROM monitored_region)
                            WHERE place > ?)
                        """, arguments: [perApp])
                return Dictionary(uniqueKeysWithValues: excess.map { row in (row["app_id"] as String, row["excess"] as Int) })
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "remove the regions beyond max_regions_per_app")
        }
    }

    /// The highest client number any stored row uses (0 if none): new clients are numbered above it, so a
    /// restored region is never mistaken for a new client's.
    public func highestStoredClient() throws(StateDatabaseError) -> Int {
        do {
            return try database.read { db in
                try Int.fetchOne(db, sql: "SELECT MAX(client) FROM monitored_region") ?? 0
            }
        } catch {
            throw Self.storeError(error, file: file, doing: "read the monitored regions")
        }
    }

    /// A constraint from a row's `beacon_kind`, `uuid`, `major`, `minor` and `device` columns.
    static func constraint(_ row: Row) -> BeaconIdentityConstraint? {
        let uuidText: String = row["uuid"]
        let kindName: String = row["beacon_kind"]
        let major: Int? = row["major"]
        let minor: Int? = row["minor"]
        guard let uuid = UUID(uuidString: uuidText), let kind = BeaconKind(name: kindName) else { return nil }
        let major16 = major.flatMap(UInt16.init(exactly:)), minor16 = minor.flatMap(UInt16.init(exactly:))
        guard (major == nil) == (major16 == nil), (minor == nil) == (minor16 == nil) else { return nil }
        switch kind {
        case .iBeacon, .altBeacon:
            return try? BeaconIdentityConstraint(kind: kind, uuid: uuid, major: major16, minor: minor16)
        case .eddystone:
            let namespace = EddystoneNamespace(identityBytes: uuid)
            return .eddystone(namespace: namespace, instance: major16 == nil ? nil : EddystoneInstance(identityBytes: uuid))
        case .privateDevice:
            let device: String? = row["device"]
            return .privateDevice(fingerprint: uuid, name: device)
        }
    }

    /// A region from a row's region columns (`monitored_region` and `queued_event` share them); nil if the
    /// row holds values the daemon cannot use (a hand edit).
    static func region(_ row: Row) -> BeaconRegion? {
        guard let constraint = constraint(row) else { return nil }
        let enter: Int? = row["enter_rssi"]
        let absent: Int? = row["absent_rssi"]
        var hysteresis: RSSIHysteresis?
        switch (enter, absent) {
        case (nil, nil): hysteresis = nil
        case let (enter?, absent?):
            guard let both = try? RSSIHysteresis(enterAtOrAbove: enter, absentBelow: absent) else { return nil }
            hysteresis = both
        default: return nil
        }
        let entryDelay: Int64? = row["entry_delay_us"]
        let exitDelay: Int64? = row["exit_delay_us"]
        return BeaconRegion(
            identifier: row["identifier"], constraint: constraint,
            notifyOnEntry: row["notify_on_entry"], notifyOnExit: row["notify_on_exit"],
            hysteresis: hysteresis, room: row["room"], entryDelay: entryDelay.map { .microseconds($0) },
            exitDelay: exitDelay.map { .microseconds($0) })
    }
}
