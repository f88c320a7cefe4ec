import GRDB
public import BeacondCore

/// The administrator's location-services switch (`beaconctl services on|off`), durable like decisions:
/// turning services off must not silently turn back on after a restart.
extension SQLiteStateDatabase {
    static let locationServicesKey = "location_services"

    /// The stored switch; true when never set.
    public func locationServicesSwitch() throws(StateDatabaseError) -> Bool {
        do {
            let value = try database.read { db in
                try String.fetchOne(
                    db, sql: "SELECT value FROM daemon_setting WHERE key = ?",
                    arguments: [Self.locationServicesKey])
            }
            return value != "off"
        } catch {
            throw StateDatabaseError(
                file: file, message: "cannot read the location-services switch: \(error)",
                fix: "check that the state directory is readable by the daemon's user")
        }
    }

    public func saveLocationServicesSwitch(_ enabled: Bool) throws(StateDatabaseError) {
        do {
            try write(.powerLoss) { db in
                try db.execute(
                    sql: """
                        INSERT INTO daemon_setting (key, value, updated_at)
                        VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                        ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                        """, arguments: [Self.locationServicesKey, enabled ? "on" : "off"])
            }
        } catch {
            throw StateDatabaseError(
                file: file, message: "cannot save the location-services switch: \(error)",
                fix: "check that the state directory is writable and the disk is not full")
        }
    }
}
