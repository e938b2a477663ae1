// SPDX-License-Identifier: MIT
@testable import Cache
import Foundation
import GRDB
import Outbox
import Testing
import WearMetrics

@Suite("Schema migrations and durability")
struct SchemaMigrationTests {
    /// A cache as the first schema wrote it: pending (paired and not), delivered and
    /// quarantined rows with random version-4 ids.
    private func writeFirstSchemaCache(at path: String) throws {
        let db = try RawConnection(path: path)
        #expect(try db.scalarText("PRAGMA journal_mode = WAL") == "wal")
        try CacheSchema.migrate(db.queue, upTo: "v1: records, devices, meta")
        try db.transaction { db in
            let rows: [(Int64, String, String, String?, Int, String?)] = [
                (1, "0f9c3a4e-5d6b-4c7a-8e9f-000000000001", "AA:00:00:00:00:01", "member-1", 1, nil),
                (2, "0f9c3a4e-5d6b-4c7a-8e9f-000000000002", "AA:00:00:00:00:01", "member-1", 0, nil),
                (3, "0f9c3a4e-5d6b-4c7a-8e9f-000000000003", "AA:00:00:00:00:02", nil, 0, nil),
                (4, "0f9c3a4e-5d6b-4c7a-8e9f-000000000004", "AA:00:00:00:00:01", "member-1", 2, "hr out of range"),
                (5, "0f9c3a4e-5d6b-4c7a-8e9f-000000000005", "AA:00:00:00:00:02", nil, 0, nil),
            ]
            for (seq, id, device, client, state, reason) in rows {
                let record = hrRecord(device, Int(seq))
                try db.execute(sql: """
                    INSERT INTO record (sequence, id, device_id, timestamp_ms, client_id, state, stored_ms, delivered_ms, reason, encrypted, payload)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
                    """, arguments: [seq, id, device, record.timestamp.millisecondsSince1970, client, state,
                                     record.timestamp.millisecondsSince1970, state == 1 ? record.timestamp.millisecondsSince1970 : nil,
                                     reason, Data(record.jsonString().utf8)])
            }
        }
        #expect(try db.rows("SELECT identifier FROM grdb_migrations") { $0[0] as String } == ["v1: records, devices, meta"])
    }

    @Test("a cache of the first schema is upgraded in place: pending, delivered, quarantined and held records keep their state and ids")
    func upgradeInPlace() async throws {
        let dir = TempDir()
        try writeFirstSchemaCache(at: dir.database)
        let inode = try FileManager.default.attributesOfItem(atPath: dir.database)[.systemFileNumber] as? NSNumber

        let cache = try RecordCache(path: dir.database, options: CacheOptions(unpaired: .hold))
        #expect(try FileManager.default.attributesOfItem(atPath: dir.database)[.systemFileNumber] as? NSNumber == inode)
        let stats = try await cache.stats()
        #expect(stats.total == 5)
        #expect(stats.pending == 3)
        #expect(stats.unpairedPending == 2)
        #expect(stats.delivered == 1)
        #expect(stats.quarantined == 1)
        #expect(try await cache.storedRecord(id: "0f9c3a4e-5d6b-4c7a-8e9f-000000000001")?.state == .delivered)
        #expect(try await cache.storedRecord(id: "0f9c3a4e-5d6b-4c7a-8e9f-000000000004")?.state == .quarantined)
        // hold: only the paired pending record goes out, then new records after it.
        #expect(try await cache.pendingBatch(limit: 10).map(\.sequence) == [2])
        try await cache.pair(address: "AA:00:00:00:00:03", clientID: "member-3")
        cache.append(hrRecord("AA:00:00:00:00:03", 6))
        try await cache.flush()
        #expect(try await cache.pendingBatch(limit: 10).map(\.sequence) == [2, 6])
        // Pairing the held device releases its old records in sequence order.
        #expect(try await cache.pair(address: "AA:00:00:00:00:02", clientID: "member-2") == 2)
        let batch = try await cache.pendingBatch(limit: 10)
        #expect(batch.map(\.sequence) == [2, 3, 5, 6])
        #expect(batch.map(\.clientID) == ["member-1", "member-2", "member-2", "member-3"])
        try await cache.markDelivered(batch.map(\.id))
        #expect(try await cache.pendingBatch(limit: 10).isEmpty)
        let after = try await cache.stats()
        #expect(after.delivered == 5)
        #expect(after.quarantined == 1)
        try await cache.close()
    }

    @Test("delivery leaves each record row as it was written")
    func deliveryDoesNotRewriteRecords() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append((0..<20).map { hrRecord("AA:00:00:00:00:01", $0) })
        try await cache.flush()
        let rows: @Sendable () async throws -> [[DatabaseValue]] = {
            try await cache.database.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM record ORDER BY sequence").map { Array($0.databaseValues) }
            }
        }
        let before = try await rows()
        try await cache.markDelivered(try await cache.pendingBatch(limit: 20).map(\.id))
        #expect(try await cache.stats().delivered == 20)
        #expect(try await rows() == before)
        try await cache.close()
    }

    @Test("record ids are time-ordered version 7 UUIDs, increasing with the sequence")
    func timeOrderedIDs() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitRecords: 100))
        for i in 0..<1000 { cache.append(hrRecord("AA:00:00:00:00:0\(i % 5)", i)) }
        try await cache.flush()
        let ids = try await cache.storedRecords(limit: 1000).map(\.id)
        #expect(ids.count == 1000)
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { $0.count == 36 && Array($0)[14] == "7" && "89ab".contains(Array($0)[19]) })
        try await cache.close()
    }

    @Test("the writer commits with synchronous = FULL, read back from its connection")
    func synchronousFull() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        #expect(try await cache.database.writeWithoutTransaction { try Int64.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
        #expect(try await cache.database.writeWithoutTransaction { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        try await cache.close()
    }
}
