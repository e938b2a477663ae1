// SPDX-License-Identifier: MIT
import SQLite

/// The database layout, as migrations: a cache written by an older blegate is upgraded
/// in place, never recreated (it may hold records not yet delivered).
enum CacheSchema {
    /// `record.state` marks quarantined records; any other value (0, or 1 in rows
    /// delivered before the outbox tables existed) means not quarantined. Whether a
    /// record is pending is whether the outbox tables hold its sequence.
    static let quarantined = 2

    /// A record's state as a column expression over `record` (0 pending, 1 delivered,
    /// 2 quarantined): two rowid look-ups, no scan.
    static let stateColumn = """
        CASE WHEN record.state = 2 THEN 2
             WHEN EXISTS (SELECT 1 FROM outbox WHERE outbox.sequence = record.sequence)
               OR EXISTS (SELECT 1 FROM outbox_unpaired WHERE outbox_unpaired.sequence = record.sequence) THEN 0
             ELSE 1 END
        """

    /// True for a delivered record, over `record`.
    static let isDelivered = """
        record.state != 2
        AND NOT EXISTS (SELECT 1 FROM outbox WHERE outbox.sequence = record.sequence)
        AND NOT EXISTS (SELECT 1 FROM outbox_unpaired WHERE outbox_unpaired.sequence = record.sequence)
        """

    /// One step of the layout, applied once in its own transaction.
    struct Migration {
        /// Recorded in `grdb_migrations` once applied: the table and the identifiers are
        /// part of the file format (caches written by earlier builds list theirs there).
        var identifier: String
        var apply: @Sendable (Connection) throws -> Void
    }

    /// Where applied migrations are listed, one identifier a row.
    static let migrationsTable = "grdb_migrations"

    static let migrations: [Migration] = [
        Migration(identifier: "v1: records, devices, meta") { db in
            // `sequence` is the outbox order; AUTOINCREMENT keeps it from being reused
            // after retention deletes the newest rows.
            try db.execute("""
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
        },
        Migration(identifier: "v2: write-once records, outbox tables") { db in
            // A record row is written once. Delivery deletes its sequence from a small
            // outbox table instead of rewriting the row and three partial indexes: on an
            // SD card each rewrite costs a page of the record table plus index pages, per
            // record. Pending records with a member are in `outbox`, those without one in
            // `outbox_unpaired` (which `unpaired = hold` keeps back and `pair` moves).
            try db.execute("""
                CREATE TABLE outbox (sequence INTEGER PRIMARY KEY);
                CREATE TABLE outbox_unpaired (sequence INTEGER PRIMARY KEY, device_id TEXT NOT NULL);
                INSERT INTO outbox (sequence) SELECT sequence FROM record WHERE state = 0 AND client_id IS NOT NULL;
                INSERT INTO outbox_unpaired (sequence, device_id) SELECT sequence, device_id FROM record WHERE state = 0 AND client_id IS NULL;
                DROP INDEX record_pending;
                DROP INDEX record_pending_member;
                DROP INDEX record_held;
                CREATE TRIGGER record_deleted AFTER DELETE ON record BEGIN
                    DELETE FROM outbox WHERE sequence = old.sequence;
                    DELETE FROM outbox_unpaired WHERE sequence = old.sequence;
                END;
                """)
        },
        Migration(identifier: "v3: documents") { db in
            try DocumentStore.createTables(db)
        },
    ]

    /// Applies the migrations the database has not had yet, in order (up to and
    /// including `last`), each in a transaction with its row in `migrationsTable`.
    static func migrate(_ db: Connection, upTo last: String? = nil) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS \(migrationsTable) (identifier TEXT NOT NULL PRIMARY KEY)")
        let applied = Set(try db.rows("SELECT identifier FROM \(migrationsTable)") { $0.text(0) })
        for m in migrations {
            if !applied.contains(m.identifier) {
                try db.transaction {
                    try m.apply(db)
                    try db.execute("INSERT INTO \(migrationsTable) (identifier) VALUES (?)", [m.identifier])
                }
            }
            if m.identifier == last { break }
        }
    }
}
