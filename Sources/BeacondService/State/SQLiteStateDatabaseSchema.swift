import GRDB
import BeacondCore

/// The state database's schema, as GRDB migrations: each one runs once per database, in order, in its own
/// transaction, so a new table is a further migration registered here.
/// Never edit a registered migration: databases in the field already ran it.
enum SQLiteStateDatabaseSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: app authorizations") { db in
            // One row per app id that ever requested or was given a status; an absent row is notDetermined.
            // The CHECKs keep hand edits (sqlite3 on the file) from storing values the daemon cannot read.
            try db.execute(
                sql: """
                    CREATE TABLE app_authorization (
                        app_id TEXT PRIMARY KEY NOT NULL,
                        status TEXT NOT NULL CHECK (status IN
                            ('notDetermined', 'restricted', 'denied', 'authorizedWhenInUse', 'authorizedAlways')),
                        upgrade_request_used INTEGER NOT NULL DEFAULT 0 CHECK (upgrade_request_used IN (0, 1)),
                        pending_request TEXT CHECK (pending_request IS NULL OR pending_request IN ('whenInUse', 'always')),
                        updated_at TEXT NOT NULL
                    ) STRICT
                    """)
        }
        migrator.registerMigration("v2: daemon settings") { db in
            // Administrator switches that outlive a restart (`beaconctl services off`), one row per setting.
            try db.execute(
                sql: """
                    CREATE TABLE daemon_setting (
                        key TEXT PRIMARY KEY NOT NULL,
                        value TEXT NOT NULL,
                        updated_at TEXT NOT NULL
                    ) STRICT
                    """)
        }
        migrator.registerMigration("v3: monitored regions and queued events") { db in
            // Every monitored region, under the client that monitors it (client numbers are never reused while
            // this table remembers them), with its monitor state: after a restart the regions resume without
            // their apps, and state and last determination decide which events a restart may produce.
            try db.execute(
                sql: """
                    CREATE TABLE monitored_region (
                        client INTEGER NOT NULL CHECK (client > 0),
                        app_id TEXT NOT NULL,
                        identifier TEXT NOT NULL,
                        uuid TEXT NOT NULL,
                        major INTEGER CHECK (major IS NULL OR major BETWEEN 0 AND 65535),
                        minor INTEGER CHECK (minor IS NULL OR minor BETWEEN 0 AND 65535),
                        notify_on_entry INTEGER NOT NULL CHECK (notify_on_entry IN (0, 1)),
                        notify_on_exit INTEGER NOT NULL CHECK (notify_on_exit IN (0, 1)),
                        state TEXT NOT NULL CHECK (state IN ('unknown', 'inside', 'outside')),
                        last_determined_state TEXT NOT NULL CHECK (last_determined_state IN ('unknown', 'inside', 'outside')),
                        last_seen_us INTEGER,
                        PRIMARY KEY (client, identifier)
                    ) STRICT
                    """)
            // Region events of apps whose client is gone, oldest first (id order), delivered to the app's next
            // client; bounded per app by the daemon (the oldest dropped and counted in queued_event_drop).
            try db.execute(
                sql: """
                    CREATE TABLE queued_event (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id TEXT NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('didEnterRegion', 'didExitRegion')),
                        identifier TEXT NOT NULL,
                        uuid TEXT NOT NULL,
                        major INTEGER CHECK (major IS NULL OR major BETWEEN 0 AND 65535),
                        minor INTEGER CHECK (minor IS NULL OR minor BETWEEN 0 AND 65535),
                        notify_on_entry INTEGER NOT NULL CHECK (notify_on_entry IN (0, 1)),
                        notify_on_exit INTEGER NOT NULL CHECK (notify_on_exit IN (0, 1)),
                        timestamp_us INTEGER NOT NULL
                    ) STRICT
                    """)
            try db.execute(sql: "CREATE INDEX queued_event_by_app ON queued_event (app_id, id)")
            // How many of an app's events were dropped (queue full or too old) since its last delivery.
            try db.execute(
                sql: """
                    CREATE TABLE queued_event_drop (
                        app_id TEXT PRIMARY KEY NOT NULL,
                        dropped INTEGER NOT NULL CHECK (dropped >= 0)
                    ) STRICT
                    """)
        }
        migrator.registerMigration("v4: region RSSI hysteresis") { db in
            // A region's own thresholds (EnterRSSI, AbsentRSSI, dBm): both or neither; NULL uses the daemon's
            // [monitoring] default. Queued events keep the region as it was, thresholds included.
            for table in ["monitored_region", "queued_event"] {
                try db.execute(
                    sql: "ALTER TABLE \(table) ADD COLUMN enter_rssi INTEGER "
                        + "CHECK (enter_rssi IS NULL OR enter_rssi BETWEEN -127 AND 20)")
                try db.execute(
                    sql: "ALTER TABLE \(table) ADD COLUMN absent_rssi INTEGER "
                        + "CHECK (absent_rssi IS NULL OR (absent_rssi BETWEEN -127 AND 20 AND enter_rssi >= absent_rssi))")
            }
        }
        migrator.registerMigration("v5: receivers that heard a region") { db in
            // StoredHearing as JSON: which receivers (by room) heard the region lately and, while it is blind, which
            // it waits for. NULL: none but this node's scanner, or written before this column.
            try db.execute(
                sql: "ALTER TABLE monitored_region ADD COLUMN heard_by TEXT "
                    + "CHECK (heard_by IS NULL OR json_valid(heard_by))")
        }
        migrator.registerMigration("v6: region room, entry and exit delays") { db in
            // Room: inside only while its beacon is in that room; delays in µs. NULL: none (any room, enter at
            // once, the daemon's exit). Queued events keep the region as it was.
            for table in ["monitored_region", "queued_event"] {
                try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN room TEXT CHECK (room IS NULL OR length(room) BETWEEN 1 AND 64)")
                try db.execute(
                    sql: "ALTER TABLE \(table) ADD COLUMN entry_delay_us INTEGER "
                        + "CHECK (entry_delay_us IS NULL OR entry_delay_us BETWEEN 0 AND 86400000000)")
                try db.execute(
                    sql: "ALTER TABLE \(table) ADD COLUMN exit_delay_us INTEGER "
                        + "CHECK (exit_delay_us IS NULL OR exit_delay_us BETWEEN 1 AND 86400000000)")
            }
        }
        migrator.registerMigration("v7: beacon kinds") { db in
            // The region's beacon kind (rows written before kinds are iBeacon regions, which the default keeps them);
            // `uuid`, `major` and `minor` hold the kind's fields as BeaconIdentityConstraint lays them out (an
            // Eddystone namespace and instance as the 16 bytes, a private device's key fingerprint), and `device` a
            // private device's name.
            for table in ["monitored_region", "queued_event"] {
                try db.execute(
                    sql: "ALTER TABLE \(table) ADD COLUMN beacon_kind TEXT NOT NULL DEFAULT 'iBeacon' "
                        + "CHECK (beacon_kind IN ('iBeacon', 'AltBeacon', 'Eddystone', 'PrivateDevice'))")
                try db.execute(
                    sql: "ALTER TABLE \(table) ADD COLUMN device TEXT "
                        + "CHECK (device IS NULL OR (beacon_kind = 'PrivateDevice' AND length(device) BETWEEN 1 AND 64))")
            }
        }
        return migrator
    }
}
