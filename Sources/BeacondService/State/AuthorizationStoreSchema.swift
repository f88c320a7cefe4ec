import GRDB

/// The state database's schema, as GRDB migrations: each one runs once per database, in order, in its own
/// transaction, so later issues (the durable event queue) add tables by registering further migrations here.
/// Never edit a registered migration: databases in the field already ran it.
enum AuthorizationStoreSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: app authorizations") { db in
            // One row per app id that ever requested or was given a status; an absent row is notDetermined.
            // The CHECKs keep hand edits (sqlite3 on the file) from storing values the daemon cannot read.
            try db.execute(sql: """
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
            try db.execute(sql: """
                CREATE TABLE daemon_setting (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                ) STRICT
                """)
        }
        return migrator
    }
}
