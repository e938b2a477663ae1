// SPDX-License-Identifier: MIT
import Cache
import Foundation
import GATT
import Testing
import WearMetrics

final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func add(_ s: String) { lock.lock(); storage.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return storage }
}

@Suite("Export")
struct ExportTests {
    func filled() async throws -> (TempDir, RecordCache, [String]) {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
        cache.append((0..<10).map { hrRecord($0 % 2 == 0 ? "AA:00:00:00:00:01" : "AA:00:00:00:00:02", $0) })
        try await cache.flush()
        let batch = try await cache.pendingBatch(limit: 3)
        try await cache.markDelivered(batch.map(\.id))
        return (dir, cache, batch.map(\.id))
    }

    @Test("jsonl: the WearMetrics JSON plus id, client_id and synced, since T")
    func jsonl() async throws {
        let (_, cache, delivered) = try await filled()
        let lines = Lines()
        let since = UTCTimestamp(millisecondsSince1970: base.millisecondsSince1970 + 2000)
        let n = try await cache.export(since: since, format: .jsonl) { lines.add($0) }
        #expect(n == 8)
        let parsed = try lines.all.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(lines.all.allSatisfy { $0.hasSuffix("}\n") })
        #expect(parsed.first?["timestamp"] as? String == "2026-01-01T03:31:04.000Z")
        #expect(parsed.first?["id"] as? String == delivered[2])
        #expect(parsed.first?["synced"] as? Bool == true)
        #expect(parsed.first?["client_id"] as? String == "member-1")
        #expect(parsed[1]["client_id"] is NSNull)
        #expect(parsed[1]["synced"] as? Bool == false)
        // The cache's fields in key order, then the record's text as sync sends it.
        let record = hrRecord("AA:00:00:00:00:02", 3)
        let sequence = try #require(parsed[1]["sequence"] as? Int)
        let id = try #require(parsed[1]["id"] as? String)
        #expect(lines.all[1] == #"{"client_id":null,"id":"\#(id)","sequence":\#(sequence),"state":"pending","synced":false,"#
            + record.jsonString().dropFirst() + "\n")
    }

    @Test("csv: header, one row per record, quoted JSON columns")
    func csv() async throws {
        let (_, cache, _) = try await filled()
        let lines = Lines()
        let n = try await cache.export(since: base, format: .csv) { lines.add($0) }
        #expect(n == 10)
        let all = lines.all
        #expect(all.count == 11)
        #expect(all[0] == "id,sequence,client_id,synced,state,timestamp,device_id,source,hr,rr_ms,metrics,meta,reason\n")
        let row = all[1]
        #expect(row.contains(",1,member-1,true,delivered,2026-01-01T03:31:02.000Z,AA:00:00:00:00:01,ble_hrm,70,812.5 790,"))
        #expect(row.contains(#""{""hr"":70}""#))
        #expect(row.hasSuffix(#"""sensor_contact"":""detected"",""rr_count"":""2""}",\#n"#))
    }
}
