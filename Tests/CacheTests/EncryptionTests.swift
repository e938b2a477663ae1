// SPDX-License-Identifier: MIT
import Cache
import Config
import Foundation
import GRDB
import Testing
import WearMetrics

@Suite("Encryption at rest")
struct EncryptionTests {
    let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }

    @Test("round trip; sealed fields on disk are not plaintext, the typed columns stay empty")
    func roundTrip() async throws {
        let dir = TempDir()
        let records = (0..<20).map { hrRecord("AA:00:00:00:00:01", $0) }
        do {
            let cache = try RecordCache(path: dir.database, options: CacheOptions(encryptionKey: key))
            cache.append(records)
            try await cache.close()
        }
        let cache = try RecordCache(path: dir.database, options: CacheOptions(encryptionKey: key))
        #expect(try await cache.pendingBatch(limit: 100).map(\.record) == records)
        #expect(try await cache.stats().encrypted)
        let db = try RawConnection(path: dir.database)
        let payloads = try db.rows("SELECT sealed FROM record") { ($0[0] as Data?) ?? Data() }
        #expect(payloads.count == 20)
        for p in payloads {
            #expect(p.count > 28)
            #expect(p.range(of: Data("ble_hrm".utf8)) == nil)
            #expect(p.range(of: Data("sensor_contact".utf8)) == nil)
            #expect(p.range(of: Data("detected".utf8)) == nil)
        }
        #expect(try db.scalarInt64("SELECT count(*) FROM record WHERE coalesce(hr, rr, contact, rr_count, extra) IS NOT NULL") == 0)
    }

    @Test("a wrong key is refused at open; no key is refused when records are encrypted")
    func wrongKey() async throws {
        let dir = TempDir()
        do {
            let cache = try RecordCache(path: dir.database, options: CacheOptions(encryptionKey: key))
            cache.append(hrRecord("AA:00:00:00:00:01", 0))
            try await cache.close()
        }
        var other = key
        other[0] ^= 1
        #expect {
            try RecordCache(path: dir.database, options: CacheOptions(encryptionKey: other))
        } throws: { e in
            (e as? CacheError)?.code == .wrongKey && "\(e)".contains("another key")
        }
        #expect {
            try RecordCache(path: dir.database)
        } throws: { e in
            (e as? CacheError)?.code == .keyRequired && "\(e)".contains("cache.encryption_key_file")
        }
        #expect {
            try RecordCache(path: dir.database, options: CacheOptions(encryptionKey: [1, 2, 3]))
        } throws: { e in
            (e as? CacheError)?.code == .badKey
        }
    }

    @Test("sealed fields swapped between rows, or a clear column of a sealed row changed, fail authentication and are quarantined, not sent")
    func tamperedPayload() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(encryptionKey: key))
        cache.append((0..<5).map { hrRecord("AA:00:00:00:00:01", $0) })
        try await cache.flush()
        try RawConnection(path: dir.database).execute("""
            UPDATE record SET sealed = (SELECT sealed FROM record WHERE sequence = 1) WHERE sequence = 2;
            UPDATE record SET timestamp_ms = timestamp_ms + 1000 WHERE sequence = 4
            """)
        let batch = try await cache.pendingBatch(limit: 10)
        #expect(batch.map(\.sequence) == [1, 3, 5])
        let stats = try await cache.stats()
        #expect(stats.quarantined == 2)
        #expect(stats.quarantineReasons.allSatisfy { $0.reason.contains("AES-GCM") }, "\(stats.quarantineReasons)")
    }

    @Test("the outbox hands out each record as stored, its JSON text the record's own; damaged clear fields are quarantined, not sent")
    func storedRecordsAndDamagedClearFields() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        let records = (0..<4).map { hrRecord("AA:00:00:00:00:01", $0) }
        cache.append(records)
        try await cache.flush()
        try RawConnection(path: dir.database).execute("""
            UPDATE record SET rr = substr(rr, 1, 7) WHERE sequence = 2;
            UPDATE record SET extra = CAST('[1, 2]' AS BLOB) WHERE sequence = 3;
            """)
        let batch = try await cache.pendingBatch(limit: 10)
        #expect(batch.map(\.sequence) == [1, 4])
        #expect(batch.map { $0.record.jsonString() } == [records[0].jsonString(), records[3].jsonString()])
        let stats = try await cache.stats()
        #expect(stats.quarantined == 2)
        #expect(stats.quarantineReasons.allSatisfy { $0.reason.contains("cannot be read back (corrupted") },
                "\(stats.quarantineReasons)")
    }

    @Test("the key comes from a mode-0600 file; a looser mode is a clear error")
    func keyFile() async throws {
        let dir = TempDir()
        let path = dir.path + "/cache.key"
        try Data(key).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let config = try GatewayConfiguration.parse(toml: "[cache]\nencryption_key_file = \"\(path)\"")
        #expect {
            try config.loadEncryptionKey()
        } throws: { e in
            "\(e)" == "config error: cache.encryption_key_file: \(path) has mode 0644; it must be readable by its owner only (mode 0600): chmod 600 \(path). Example: head -c 32 /dev/urandom > \(path) && chmod 600 \(path)"
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let loaded = try config.loadEncryptionKey()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(encryptionKey: loaded))
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.close()
        #expect(try await cache.storedRecords().count == 1)
    }
}
