// SPDX-License-Identifier: MIT
@testable import Cache
import Foundation
import Outbox
import GRDB
import Testing
import WearMetrics

/// Caches written by the builds that ran the cache on GRDB before the typed columns: the
/// same tables, with the applied migrations listed in GRDB's `grdb_migrations`, records as
/// compact JSON text. Built here with raw SQL, as that build left them, so the test does
/// not depend on the cache's own migrations.
@Suite("Caches written by the GRDB-based build")
struct GRDBBuiltCacheTests {
    private func writeGRDBBuiltCache(at path: String) throws {
        let db = try RawConnection(path: path)
        try db.execute("PRAGMA page_size = 1024")
        #expect(try db.scalarText("PRAGMA journal_mode = WAL") == "wal")
        try db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        try db.execute("VACUUM")
        try db.execute("""
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            CREATE TABLE record (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, device_id TEXT NOT NULL,
                timestamp_ms INTEGER NOT NULL, client_id TEXT, state INTEGER NOT NULL DEFAULT 0, stored_ms INTEGER NOT NULL,
                delivered_ms INTEGER, reason TEXT, encrypted INTEGER NOT NULL, payload BLOB NOT NULL);
            CREATE INDEX record_timestamp ON record(timestamp_ms);
            CREATE TABLE device (
                address TEXT PRIMARY KEY NOT NULL, name TEXT, model TEXT, firmware TEXT, battery REAL,
                first_seen_ms INTEGER, last_seen_ms INTEGER, client_id TEXT, paired_ms INTEGER);
            CREATE TABLE cache_meta (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);
            CREATE TABLE outbox (sequence INTEGER PRIMARY KEY);
            CREATE TABLE outbox_unpaired (sequence INTEGER PRIMARY KEY, device_id TEXT NOT NULL);
            CREATE TRIGGER record_deleted AFTER DELETE ON record BEGIN
                DELETE FROM outbox WHERE sequence = old.sequence;
                DELETE FROM outbox_unpaired WHERE sequence = old.sequence;
            END;
            CREATE TABLE document (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL,
                state INTEGER NOT NULL DEFAULT 0, stored_ms INTEGER NOT NULL, delivered_ms INTEGER, reason TEXT,
                encrypted INTEGER NOT NULL, payload BLOB NOT NULL, UNIQUE (kind, id));
            CREATE INDEX document_pending ON document(kind, sequence) WHERE state = 0;
            INSERT INTO grdb_migrations (identifier) VALUES
                ('v1: records, devices, meta'), ('v2: write-once records, outbox tables'), ('v3: documents');
            INSERT INTO device (address, client_id, paired_ms) VALUES ('AA:00:00:00:00:01', 'member-1', 1767238262000);
            INSERT INTO cache_meta (key, value) VALUES ('service_state', x'7b7d');
            """)
        // 1 delivered, 2 and 4 pending with a member, 3 pending without one, 5 quarantined;
        // 6 and 7 were appended and deleted by retention, so sqlite_sequence says 7.
        let rows: [(Int64, String, String?, Int, String?)] = [
            (1, "AA:00:00:00:00:01", "member-1", 0, nil), (2, "AA:00:00:00:00:01", "member-1", 0, nil),
            (3, "AA:00:00:00:00:02", nil, 0, nil), (4, "AA:00:00:00:00:01", "member-1", 0, nil),
            (5, "AA:00:00:00:00:01", "member-1", 2, "hr out of range"),
            (6, "AA:00:00:00:00:01", "member-1", 0, nil), (7, "AA:00:00:00:00:01", "member-1", 0, nil),
        ]
        try db.transaction { db in
            for (seq, device, client, state, reason) in rows {
                let record = hrRecord(device, Int(seq))
                try db.execute(sql: """
                    INSERT INTO record (sequence, id, device_id, timestamp_ms, client_id, state, stored_ms, reason, encrypted, payload)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
                    """, arguments: [seq, "01900000-0000-7000-8000-00000000000\(seq)", device, record.timestamp.millisecondsSince1970, client,
                                     state, record.timestamp.millisecondsSince1970, reason,
                                     Data(Self.compact(Array(record.jsonString().utf8)))])
            }
            try db.execute(sql: "INSERT INTO outbox (sequence) VALUES (2), (4), (6), (7)")
            try db.execute(sql: "INSERT INTO outbox_unpaired (sequence, device_id) VALUES (3, 'AA:00:00:00:00:02')")
            try db.execute(sql: "DELETE FROM record WHERE sequence IN (6, 7)")
            try db.execute(sql: """
                INSERT INTO document (kind, id, revision, state, stored_ms, encrypted, payload)
                VALUES ('workout', 'w-1', 1, 0, 1767238262000, 0, CAST('{"id":"w-1"}' AS BLOB))
                """)
        }
    }

    /// The compact text those builds stored: the JSON with the legacy pieces as one byte
    /// each (longest first; any choice reads back the same).
    static func compact(_ text: [UInt8]) -> [UInt8] {
        let pieces = LegacyPayload.pieces.enumerated().sorted { $0.element.count > $1.element.count }
        var out: [UInt8] = [0x01]
        var i = 0
        next: while i < text.count {
            for (n, piece) in pieces where text.count - i >= piece.count && text[i..<(i + piece.count)].elementsEqual(piece) {
                out.append(0x02 + UInt8(n))
                i += piece.count
                continue next
            }
            out.append(text[i])
            i += 1
        }
        return out
    }

    @Test("it opens, converts the records to typed columns once, and keeps every record's state, the pairing, documents and meta")
    func opensAndContinues() async throws {
        let dir = TempDir()
        try writeGRDBBuiltCache(at: dir.database)
        let cache = try RecordCache(path: dir.database)
        let stats = try await cache.stats()
        #expect(stats.total == 5)
        #expect(stats.pending == 3)
        #expect(stats.unpairedPending == 1)
        #expect(stats.delivered == 1)
        #expect(stats.quarantined == 1)
        #expect(try await cache.pendingBatch(limit: 10).map(\.sequence) == [2, 3, 4])
        #expect(try await cache.device(address: "AA:00:00:00:00:01")?.member?.clientID == "member-1")
        #expect(try await cache.documents(kind: .workout).map(\.json) == [#"{"id":"w-1"}"#])
        #expect(try await cache.loadMetaBytes(key: "service_state") == Array("{}".utf8))
        // The sequence continues after the highest ever given (retention deleted 6 and 7).
        let seq = cache.append(hrRecord("AA:00:00:00:00:01", 8))
        #expect(seq == 8)
        try await cache.flush()
        #expect(try await cache.storedRecords(after: 4).map(\.sequence) == [5, 8])
        #expect(try await cache.storedRecords(after: 7).first?.clientID == "member-1")
        // Migrated records read from their JSON text: metrics and meta in key order.
        #expect(try await cache.storedRecords(limit: 10).map(\.record)
                == [1, 2, 3, 4, 5].map { keyOrdered(hrRecord($0 == 3 ? "AA:00:00:00:00:02" : "AA:00:00:00:00:01", $0)) } + [hrRecord("AA:00:00:00:00:01", 8)])
        try await cache.close()
        let db = try RawConnection(path: dir.database)
        #expect(try db.rows("SELECT identifier FROM grdb_migrations ORDER BY rowid") { $0[0] as String }
                == [CacheSchema.v1, CacheSchema.v2, CacheSchema.v3, CacheSchema.v4])
        #expect(try db.scalarInt64("PRAGMA page_size") == 1024)
        // Opened again: nothing left to migrate, everything where it was.
        let again = try RecordCache(path: dir.database)
        #expect(try await again.pendingBatch(limit: 10).map(\.sequence) == [2, 3, 4, 8])
        try await again.close()
        #expect(try db.scalarInt64("SELECT count(*) FROM grdb_migrations") == 4)
    }

    @Test("one that stopped at the first migration is brought up to date")
    func migratesTheRest() async throws {
        let dir = TempDir()
        let db = try RawConnection(path: dir.database)
        try db.execute("""
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1: records, devices, meta');
            CREATE TABLE record (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, device_id TEXT NOT NULL,
                timestamp_ms INTEGER NOT NULL, client_id TEXT, state INTEGER NOT NULL DEFAULT 0, stored_ms INTEGER NOT NULL,
                delivered_ms INTEGER, reason TEXT, encrypted INTEGER NOT NULL, payload BLOB NOT NULL);
            CREATE INDEX record_pending ON record(sequence) WHERE state = 0;
            CREATE INDEX record_pending_member ON record(sequence) WHERE state = 0 AND client_id IS NOT NULL;
            CREATE INDEX record_held ON record(device_id) WHERE state = 0 AND client_id IS NULL;
            CREATE INDEX record_timestamp ON record(timestamp_ms);
            CREATE TABLE device (
                address TEXT PRIMARY KEY NOT NULL, name TEXT, model TEXT, firmware TEXT, battery REAL,
                first_seen_ms INTEGER, last_seen_ms INTEGER, client_id TEXT, paired_ms INTEGER);
            CREATE TABLE cache_meta (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);
            """)
        let record = hrRecord("AA:00:00:00:00:01", 0)
        try db.execute("INSERT INTO record (id, device_id, timestamp_ms, client_id, state, stored_ms, encrypted, payload) VALUES (?, ?, ?, ?, 0, ?, 0, ?)",
                       ["0f9c3a4e-5d6b-4c7a-8e9f-000000000001", "AA:00:00:00:00:01", record.timestamp.millisecondsSince1970, "member-1",
                        record.timestamp.millisecondsSince1970, Data(record.jsonString().utf8)])
        let cache = try RecordCache(path: dir.database)
        #expect(try await cache.pendingBatch(limit: 10).map { $0.record.jsonString() } == [keyOrdered(record).jsonString()])
        try await cache.putDocument(kind: .workout, id: "w-1", json: #"{"id":"w-1"}"#)
        #expect(try await cache.documentCounts()[.workout]?.pending == 1)
        try await cache.close()
        #expect(try db.rows("SELECT identifier FROM grdb_migrations ORDER BY identifier") { $0[0] as String }
                == ["v1: records, devices, meta", "v2: write-once records, outbox tables", "v3: documents", "v4: typed records"])
    }
}
