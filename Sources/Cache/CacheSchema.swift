// SPDX-License-Identifier: MIT
import Foundation
import GRDB
import WearMetrics

/// The database layout, as GRDB migrations: a cache written by an older blegate is
/// upgraded in place, never recreated (it may hold records not yet delivered).
///
/// Applied migrations are listed in `grdb_migrations` by identifier: the table and the
/// identifiers are part of the file format (every cache since the first lists its own).
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

    static let v1 = "v1: records, devices, meta"
    static let v2 = "v2: write-once records, outbox tables"
    static let v3 = "v3: documents"
    static let v4 = "v4: typed records"

    /// The migrations, in order. `cipher` opens the sealed payloads v4 converts (the cache's
    /// key, checked against `cache_meta` before any migration runs).
    static func migrator(cipher: PayloadCipher?) -> DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration(v1) { db in
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
        m.registerMigration(v2) { db in
            // A record row is written once. Delivery deletes its sequence from a small
            // outbox table instead of rewriting the row and its indexes: on an SD card
            // each rewrite costs a page of the record table plus index pages, per record.
            // Pending records with a member are in `outbox`, those without one in
            // `outbox_unpaired` (which `unpaired = hold` keeps back and `pair` moves).
            try db.execute(sql: """
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
        }
        m.registerMigration(v3) { db in
            try DocumentStore.createTables(db)
        }
        m.registerMigration(v4) { db in
            try typedRecords(db, cipher: cipher)
        }
        return m
    }

    /// v4: each record's fields in typed columns, its device's facts once in `device_info`,
    /// the device by an integer key. Every row is converted in place, keeping its sequence
    /// (the outbox order), id, member, state, times and reason; the outbox tables and the
    /// record sequence are left as they were. A sealed payload is opened with the cache's
    /// key and its fields sealed again in the new form. A payload that cannot be read back
    /// (corrupted) leaves its record quarantined with the reason, as the outbox would have
    /// on meeting it.
    static func typedRecords(_ db: Database, cipher: PayloadCipher?) throws {
        // The device table gets an integer key the records point to.
        try db.execute(sql: """
            CREATE TABLE device_keyed (
                key INTEGER PRIMARY KEY,
                address TEXT NOT NULL UNIQUE,
                name TEXT,
                model TEXT,
                firmware TEXT,
                battery REAL,
                first_seen_ms INTEGER,
                last_seen_ms INTEGER,
                client_id TEXT,
                paired_ms INTEGER
            );
            INSERT INTO device_keyed (address, name, model, firmware, battery, first_seen_ms, last_seen_ms, client_id, paired_ms)
                SELECT address, name, model, firmware, battery, first_seen_ms, last_seen_ms, client_id, paired_ms FROM device ORDER BY rowid;
            INSERT OR IGNORE INTO device_keyed (address) SELECT DISTINCT device_id FROM record;
            DROP TABLE device;
            ALTER TABLE device_keyed RENAME TO device;
            CREATE TABLE device_info (
                key INTEGER PRIMARY KEY,
                device INTEGER NOT NULL,
                entries BLOB NOT NULL
            );
            """)
        try db.execute(sql: RecordRow.createTable.replacingOccurrences(of: "CREATE TABLE record", with: "CREATE TABLE record_typed"))
        let highest = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'record'") ?? 0
        var devices: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, address FROM device") {
            devices[row["address"]] = row["key"]
        }
        var infos = DeviceInfoWriter()
        let insert = try db.makeStatement(sql: RecordRow.insertSQL.replacingOccurrences(of: "INSERT INTO record ", with: "INSERT INTO record_typed "))
        let unqueue = try db.makeStatement(sql: "DELETE FROM outbox WHERE sequence = ?")
        let unqueueHeld = try db.makeStatement(sql: "DELETE FROM outbox_unpaired WHERE sequence = ?")
        let rows = try Row.fetchCursor(db, sql: """
            SELECT sequence, id, device_id, timestamp_ms, client_id, state, stored_ms, delivered_ms, reason, encrypted, payload
            FROM record ORDER BY sequence
            """)
        while let old = try rows.next() {
            let id: String = old["id"]
            let address: String = old["device_id"]
            let timestampMs: Int64 = old["timestamp_ms"]
            guard let device = devices[address] else { throw CacheError(.cannotOpen, "record \(id): device \(address) missing") }
            var row = RecordRow(sequence: old["sequence"], id: id, timestampMs: timestampMs, device: device, source: 0,
                                clientID: old["client_id"], state: old["state"], storedMs: old["stored_ms"],
                                deliveredMs: old["delivered_ms"], reason: old["reason"], deviceInfo: nil, fields: RecordFields(),
                                sealed: nil)
            let encrypted: Bool = old["encrypted"]
            let payload = Array((old["payload"] as Data?) ?? Data())
            do {
                let record = try LegacyPayload.record(id: id, encrypted: encrypted, payload: payload, cipher: cipher)
                let start = RecordFields.deviceStart(record.meta)
                row.source = SourceKind.code(record.source)
                row.deviceInfo = try infos.key(for: record.meta.entries[start...], device: device, in: db)
                if encrypted, let cipher {
                    row.sealed = try cipher.seal(RecordFields.body(record, deviceStart: start),
                                                 aad: PayloadCipher.recordAAD(id: id, timestampMs: timestampMs, device: address, source: row.source))
                } else {
                    row.fields = RecordFields(record, deviceStart: start)
                }
            } catch let e as CacheError where e.code == .unreadablePayload {
                row.state = quarantined
                row.reason = RecordCache.storedReason("unreadable in the cache: \(e.message)")
                try unqueue.execute(arguments: [row.sequence])
                try unqueueHeld.execute(arguments: [row.sequence])
            }
            insert.setUncheckedArguments(StatementArguments(row.values))
            try insert.execute()
        }
        try db.execute(sql: """
            DROP TABLE record;
            ALTER TABLE record_typed RENAME TO record;
            CREATE INDEX record_timestamp ON record(timestamp_ms);
            CREATE TRIGGER record_deleted AFTER DELETE ON record BEGIN
                DELETE FROM outbox WHERE sequence = old.sequence;
                DELETE FROM outbox_unpaired WHERE sequence = old.sequence;
            END;
            """)
        // The sequence goes on after the highest ever given, even one retention deleted.
        let now = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'record'")
        if now == nil {
            if highest > 0 { try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('record', ?)", arguments: [highest]) }
        } else if highest > now! {
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = ? WHERE name = 'record'", arguments: [highest])
        }
    }

    /// Applies the migrations up to and including `last`: for tests that build a file as an
    /// older build left it.
    static func migrate(_ writer: any DatabaseWriter, upTo last: String) throws {
        try migrator(cipher: nil).migrate(writer, upTo: last)
    }
}

/// Gives each distinct run of a device's facts one `device_info` row: a record points to
/// it instead of repeating a strap's Device Information and battery (about 200 bytes of
/// text) in every row. Remembers each device's latest run, which is what its next
/// records carry; a change (the battery dropped a percent) adds a row.
struct DeviceInfoWriter {
    /// Per device key: its latest facts and their row.
    private var latest: [Int64: (entries: [(key: String, value: String)], key: Int64)] = [:]
    /// Rows added by the transaction under way, forgotten if it rolls back.
    private var added: [Int64: (entries: [(key: String, value: String)], key: Int64)] = [:]

    /// The `device_info` key for `entries` (nil for none), inserting a row when they
    /// differ from the device's latest.
    mutating func key(for entries: ArraySlice<(key: String, value: String)>, device: Int64, in db: Database) throws -> Int64? {
        guard !entries.isEmpty else { return nil }
        if let known = added[device] ?? latest[device], known.entries.count == entries.count,
           zip(known.entries, entries).allSatisfy({ $0.key == $1.key && $0.value == $1.value }) {
            return known.key
        }
        let statement = try db.cachedStatement(sql: "INSERT INTO device_info (device, entries) VALUES (?, ?)")
        try statement.execute(arguments: [device, Data(RecordFields.encodeDeviceInfo(entries))])
        let key = db.lastInsertedRowID
        added[device] = (Array(entries), key)
        return key
    }

    /// The transaction committed: its rows are the devices' latest.
    mutating func committed() {
        for (device, value) in added { latest[device] = value }
        added = [:]
    }

    /// The transaction rolled back: its rows are gone.
    mutating func rolledBack() { added = [:] }
}
