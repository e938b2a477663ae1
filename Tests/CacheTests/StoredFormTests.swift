// SPDX-License-Identifier: MIT
@testable import Cache
import Foundation
import SQLite
import Outbox
import Testing
import WearMetrics

/// How records sit in the file: compact text, small pages, files only the owner reads.
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

    @Test("records are stored compact and read back as the same JSON text; plain JSON rows still read")
    func compactRoundTrip() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append(Self.records)
        try await cache.flush()
        let stored = try await cache.storedRecords(limit: 10)
        #expect(stored.map(\.record) == Self.records)
        #expect(stored.map { $0.record.jsonString() } == Self.records.map { $0.jsonString() })

        let payloads = try Connection(path: dir.database).rows("SELECT payload FROM record ORDER BY sequence") { $0.blob(0) }
        #expect(payloads.allSatisfy { $0.first == CompactRecordText.marker })
        let strapJSON = Self.records[0].jsonString().utf8.count
        // The strap's 400-odd bytes of JSON take well under half.
        #expect(payloads[0].count * 5 < strapJSON * 2, "\(payloads[0].count) bytes stored for \(strapJSON) of JSON")

        // Every input reads back exactly, even text that already holds a control byte.
        for text in [Array("{\"a\":\"\u{1}\"}".utf8), Array("plain \u{2} text".utf8), [], Array("{}".utf8)] {
            #expect(CompactRecordText.expand(CompactRecordText.compact(text)) == text)
        }
        for r in Self.records {
            let json = Array(r.jsonString().utf8)
            #expect(CompactRecordText.expand(CompactRecordText.compact(json)) == json)
        }
    }

    @Test("a marker's literal core is in the compact form of every text holding the marker")
    func literalCores() {
        #expect(CompactRecordText.literalCore(of: Array("\"ble_wss\"".utf8)) == Array("wss".utf8))
        // A piece inside the marker, or the marker inside a piece: no core.
        #expect(CompactRecordText.literalCore(of: Array("detected".utf8)) == nil)
        #expect(CompactRecordText.literalCore(of: Array("etecte".utf8)) == nil)
        #expect(CompactRecordText.literalCore(of: Array("a\"hr\":1".utf8)) == nil)
        // Every substring of the sample records as a marker.
        var checked = 0
        for r in Self.records {
            let json = Array(r.jsonString().utf8)
            let compact = CompactRecordText.compact(json)
            for length in 3...14 {
                for start in 0...(json.count - length) {
                    guard let core = CompactRecordText.literalCore(of: Array(json[start..<(start + length)])) else { continue }
                    checked += 1
                    let found = (0...(compact.count - core.count)).contains { compact[$0..<($0 + core.count)].elementsEqual(core) }
                    #expect(found, "\(String(decoding: json[start..<(start + length)], as: UTF8.self)) → \(String(decoding: core, as: UTF8.self))")
                }
            }
        }
        #expect(checked > 1000)
    }

    @Test("memberRecords finds compact and plain rows by their markers")
    func markersOnCompactRows() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
        var scale = WearMetrics(timestamp: base, deviceID: "AA:00:00:00:00:01", source: "ble_wss")
        scale.setMetric("weight_kg", 82.2)
        cache.append([hrRecord("AA:00:00:00:00:01", 0, at: base), scale])
        try await cache.flush()
        // A row as stored before the compact form: plain JSON.
        try Connection(path: dir.database).execute("UPDATE record SET payload = ? WHERE sequence = 1",
                                                   [Array(hrRecord("AA:00:00:00:00:01", 0, at: base).jsonString().utf8)])
        let found = try await cache.memberRecords(withinLast: 60_000, containing: ["\"ble_wss\""])
        #expect(found.map(\.record.source) == ["ble_wss"])
        let hr = try await cache.memberRecords(withinLast: 60_000, containing: ["\"ble_hrm\""])
        #expect(hr.map(\.record.source) == ["ble_hrm"])
    }

    @Test("a compact payload holding a byte the cache never writes is quarantined as corrupted, not sent")
    func corruptCompactText() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append([hrRecord("AA:00:00:00:00:01", 0), hrRecord("AA:00:00:00:00:01", 1)])
        try await cache.flush()
        try Connection(path: dir.database).execute("UPDATE record SET payload = x'01027b00' WHERE sequence = 1")
        let batch = try await cache.pendingBatch(limit: 10)
        #expect(batch.map(\.sequence) == [2])
        let stats = try await cache.stats()
        #expect(stats.quarantined == 1)
        #expect(stats.quarantineReasons.first?.reason.contains("corrupted") == true, "\(stats.quarantineReasons)")
    }

    @Test("a new cache has 1 KiB pages and checkpoints about every 4 MiB of WAL")
    func pages() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.flush()
        #expect(try Connection(path: dir.database).scalarInt64("PRAGMA page_size") == 1024)
        let autocheckpoint = try await cache.writer.run { try $0.scalarInt64("PRAGMA wal_autocheckpoint") }
        #expect(autocheckpoint == 4096)
        #expect(try await cache.reader.run { try $0.scalarInt64("PRAGMA cache_size") } == -512)
        #expect(try await cache.writer.run { try $0.scalarInt64("PRAGMA cache_size") } == -512)
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
        let other = try Connection(path: dir.database)
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
