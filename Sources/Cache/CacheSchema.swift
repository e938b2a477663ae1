// SPDX-License-Identifier: MIT
import GRDB

/// The database layout, as migrations: a cache written by an older blegate is upgraded
/// in place, never recreated (it may hold records not yet delivered).
enum CacheSchema {
    /// `state` column values.
    static let pending = 0
    static let delivered = 1
    static let quarantined = 2

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1: records, devices, meta") { db in
            // `sequence` is the outbox order; AUTOINCREMENT keeps it from being reused
            // after retention deletes the newest rows.
            try db.execute(sql: """
                CREATE TABLE record (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    device_id TEXT NOT NULL,
                    timestamp_ms INTEGER NOT NULL,
                    client_id TEXT,
                    state INTEGER NOT NULL DEFAULT 0,
                    stored_ms INTEGER NOT NULL,
                    delivered_ms INTEGER,
                    reason TEXT,
                    encrypted INTEGER NOT NULL,
                    payload BLOB NOT NULL
                );
                CREATE INDEX record_pending ON record(sequence) WHERE state = 0;
                CREATE INDEX record_pending_member ON record(sequence) WHERE state = 0 AND client_id IS NOT NULL;
                CREATE INDEX record_held ON record(device_id) WHERE state = 0 AND client_id IS NULL;
                CREATE INDEX record_timestamp ON record(timestamp_ms);
                CREATE TABLE device (
                    address TEXT PRIMARY KEY NOT NULL,
                    name TEXT,
                    model TEXT,
                    firmware TEXT,
                    battery REAL,
                    first_seen_ms INTEGER,
                    last_seen_ms INTEGER,
                    client_id TEXT,
                    paired_ms INTEGER
                );
                CREATE TABLE cache_meta (
                    key TEXT PRIMARY KEY NOT NULL,
                    value BLOB NOT NULL
                );
                """)
        }
        m.registerMigration("v2: documents") { db in
            try DocumentStore.createTables(db)
        }
        m.registerMigration("v3: records by device and time") { db in
            // A class's workouts read each member's records of the class window.
            try db.execute(sql: "CREATE INDEX record_device_time ON record(device_id, timestamp_ms)")
        }
        return m
    }
}
