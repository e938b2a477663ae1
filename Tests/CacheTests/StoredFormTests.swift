// SPDX-License-Identifier: MIT
@testable import Cache
import Foundation
import GRDB
import Outbox
import Testing
import WearMetrics

/// How records sit in the file: typed columns, device facts once, small pages, files only the owner reads.
@Suite("Stored form", .serialized)
struct StoredFormTests {
    /// A heart-rate record as a strap with Device Information makes it, a battery record,
    /// an HRV record and one with text the pieces must not disturb.
    static let records: [WearMetrics] = {
        var strap = hrRecord("A0:9E:1A:6C:16:FD", 3)
        for (k, v) in [("manufacturer_name", "Polar Electro Oy"), ("model_number", "H10"), ("serial_number", "3291288939"),
                       ("firmware_version", "3.1.1"), ("hardware_version", "00760690.03"), ("software_version", "3.1.1"),
                       ("body_sensor_location", "chest"), ("battery", "0.74")] {
            strap.meta[k] = v
        }
        var battery = WearMetrics(timestamp: base, deviceID: "C9:26:9C:F6:16:4F", source: "ble_device",
                                  metrics: KeyValueList<Double>(), meta: KeyValueList<String>())
        battery.meta["battery"] = "0.67"
        var hrv = hrRecord("ED:B1:90:69:3A:AD", 9)
        for (k, v) in [("hrv_window_s", "60"), ("hrv_nn_count", "71"), ("hrv_artifact_pct", "1.4"), ("hr_source", "rr")] {
            hrv.meta[k] = v
        }
        hrv.setMetric("rmssd_ms", 41.25)
        var odd = hrRecord("AA:00:00:00:00:01", 1)
        odd.meta["name"] = "Zoë's \"chest\" strap\n\u{1}device\",\"ble_"
        odd.meta["model_number"] = "\\\"},\"meta\":{"
        return [strap, battery, hrv, odd]
    }()

    @Test("records are stored in typed columns and read back as the same records and JSON text")
    func typedRoundTrip() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        let all = Self.records + RecordTextFixtures.records
        cache.append(all)
        try await cache.flush()
        let stored = try await cache.storedRecords(limit: 100)
        #expect(stored.map(\.record) == all)
        #expect(stored.map { $0.record.jsonString() } == all.map { $0.jsonString() })

        // The strap's record: its heart rate, contact, RR count and RR in columns, nothing else.
        let db = try RawConnection(path: dir.database)
        let strap = try #require(try db.rows("SELECT * FROM record WHERE sequence = 1") { $0 }.first)
        #expect(strap["hr"] as Double? == 73)
        #expect(strap["contact"] as Int? == 3 && strap["rr_count"] as Int? == 2)
        #expect(strap["extra"] as Data? == nil)
        #expect(strap["sealed"] as Data? == nil)
        #expect(strap["source"] as Int? == 1)
        // A strap with Device Information writes a JSON text of 400-odd bytes; its row's
        // own bytes (without the device's facts, stored once) are a fraction of that.
        let rowBytes = try #require(try db.scalarInt64("""
            SELECT length(id) + length(coalesce(rr, '')) + length(coalesce(extra, '')) + 30 FROM record WHERE sequence = 1
            """))
        let strapJSON = Self.records[0].jsonString().utf8.count
        #expect(rowBytes * 4 < strapJSON, "\(rowBytes) bytes stored for \(strapJSON) of JSON")
    }

    @Test("a row read by column name and written back by GRDB's own insert is the same record")
    func rowByColumnName() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append(Self.records)
        try await cache.flush()
        try await cache.database.writeWithoutTransaction { db in
            for n in 1...Int64(Self.records.count) {
                var row = try #require(try RecordRow.fetchOne(db, sql: "SELECT * FROM record WHERE sequence = ?", arguments: [n]))
                row.sequence += 100
                row.id = "01900000-0000-7000-8000-0000000001\(n < 10 ? "0" : "")\(n)"
                try row.insert(db)
            }
        }
        let copies = try await cache.storedRecords(after: 100, limit: 10)
        #expect(copies.map(\.record) == Self.records)
        #expect(copies.allSatisfy { $0.state == .delivered })
        try await cache.close()
    }

    @Test("a device's facts are stored once, and again only when they change")
    func deviceFactsOnce() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitRecords: 7))
        var records: [WearMetrics] = []
        for i in 0..<40 {
            var r = Self.records[0]
            r.timestamp = UTCTimestamp(millisecondsSince1970: base.millisecondsSince1970 + Int64(i) * 1000)
            if i >= 30 { r.meta["battery"] = "0.73" }
            records.append(r)
        }
        cache.append(records)
        try await cache.flush()
        try await cache.close()
        let reopened = try RecordCache(path: dir.database)
        reopened.append(records[39])
        try await reopened.flush()
        #expect(try await reopened.storedRecords(limit: 100).map(\.record) == records + [records[39]])
        let db = try RawConnection(path: dir.database)
        // Two runs of facts, and one more after the restart (the writer remembers what it wrote).
        #expect(try db.scalarInt64("SELECT count(*) FROM device_info") == 3)
        #expect(try db.scalarInt64("SELECT count(DISTINCT device_info) FROM record") == 3)
        try await reopened.close()
    }

    @Test("memberRecords finds rows by their source column")
    func memberRecordsBySource() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
        var scale = WearMetrics(timestamp: base, deviceID: "AA:00:00:00:00:01", source: "ble_wss")
        scale.setMetric("weight_kg", 82.2)
        var custom = WearMetrics(timestamp: base, deviceID: "AA:00:00:00:00:01", source: "custom_scale")
        custom.setMetric("weight_kg", 82.3)
        cache.append([hrRecord("AA:00:00:00:00:01", 0, at: base), scale, custom])
        try await cache.flush()
        let found = try await cache.memberRecords(withinLast: 60_000, sources: ["ble_wss"])
        #expect(found.map(\.record) == [scale])
        let hr = try await cache.memberRecords(withinLast: 60_000, sources: ["ble_hrm"])
        #expect(hr.map(\.record.source) == ["ble_hrm"])
        #expect(try await cache.memberRecords(withinLast: 60_000, sources: ["custom_scale", "ble_bcs"]).map(\.record) == [custom])
    }

    @Test("a record whose stored fields are damaged is quarantined as corrupted, not sent")
    func damagedFields() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append([hrRecord("AA:00:00:00:00:01", 0), hrRecord("AA:00:00:00:00:01", 1), hrRecord("AA:00:00:00:00:01", 2)])
        try await cache.flush()
        try RawConnection(path: dir.database).execute("""
            UPDATE record SET extra = x'077b00' WHERE sequence = 1;
            UPDATE record SET rr = x'035511' WHERE sequence = 2
            """)
        let batch = try await cache.pendingBatch(limit: 10)
        #expect(batch.map(\.sequence) == [3])
        let stats = try await cache.stats()
        #expect(stats.quarantined == 2)
        #expect(stats.quarantineReasons.allSatisfy { $0.reason.contains("corrupted") }, "\(stats.quarantineReasons)")
    }

    @Test("a new cache has 1 KiB pages and checkpoints about every 4 MiB of WAL")
    func pages() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.flush()
        #expect(try RawConnection(path: dir.database).scalarInt64("PRAGMA page_size") == 1024)
        let autocheckpoint = try await cache.database.writeWithoutTransaction { try Int64.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") }
        #expect(autocheckpoint == 4096)
        #expect(try await cache.database.read { try Int64.fetchOne($0, sql: "PRAGMA cache_size") } == -512)
        #expect(try await cache.database.writeWithoutTransaction { try Int64.fetchOne($0, sql: "PRAGMA cache_size") } == -512)
        try await cache.close()
    }

    @Test("the database, -wal and -shm files are 0600 under a permissive umask, created or reopened")
    func fileModes() async throws {
        let dir = TempDir()
        func modes() throws -> [String: Int] {
            var out: [String: Int] = [:]
            for suffix in ["", "-wal", "-shm"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: dir.database + suffix)
                out["cache.sqlite" + suffix] = (attributes[.posixPermissions] as? NSNumber)?.intValue
            }
            return out
        }
        let expected = ["cache.sqlite": 0o600, "cache.sqlite-wal": 0o600, "cache.sqlite-shm": 0o600]
        // umask is the process's: set it only around the opens (the files appear there).
        let old = umask(0)
        let cache: RecordCache
        do {
            defer { umask(old) }
            cache = try RecordCache(path: dir.database)
        }
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.flush()
        #expect(try modes() == expected)
        try await cache.close()

        // -wal and -shm left broader by an older version are brought down to the database's mode.
        let other = try RawConnection(path: dir.database)
        try other.execute("INSERT INTO cache_meta (key, value) VALUES ('x', x'00')")
        chmod(dir.database + "-wal", 0o644)
        chmod(dir.database + "-shm", 0o666)
        let reopened: RecordCache
        do {
            let old = umask(0)
            defer { umask(old) }
            reopened = try RecordCache(path: dir.database)
        }
        reopened.append(hrRecord("AA:00:00:00:00:01", 1))
        try await reopened.flush()
        #expect(try modes() == expected)
        try await reopened.close()
        withExtendedLifetime(other) {}
    }
}
