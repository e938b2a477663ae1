// SPDX-License-Identifier: MIT
import Cache
import Outbox
import Testing
import WearMetrics

@Suite("Retention")
struct RetentionTests {
    /// 40 records per state, all 30 days old, plus 10 fresh delivered ones.
    func fill(_ cache: RecordCache) async throws -> (pending: [String], delivered: [String], quarantined: [String], fresh: [String]) {
        let now = UTCTimestamp(millisecondsSince1970: base.millisecondsSince1970 + 30 * 86_400_000)
        cache.append((0..<120).map { hrRecord("AA:00:00:00:00:0\($0 % 3)", $0) })
        cache.append((0..<10).map { hrRecord("AA:00:00:00:00:09", $0, at: UTCTimestamp(millisecondsSince1970: now.millisecondsSince1970 - 3_600_000 + Int64($0))) })
        try await cache.flush()
        let all = try await cache.pendingBatch(limit: 1000)
        let old = all.prefix(120)
        let delivered = old.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.id)
        let quarantined = old.enumerated().filter { $0.offset % 3 == 1 }.map(\.element.id)
        let pending = old.enumerated().filter { $0.offset % 3 == 2 }.map(\.element.id)
        let fresh = all.suffix(10).map(\.id)
        try await cache.markDelivered(delivered + fresh)
        try await cache.quarantine(quarantined.map { OutboxRejection(id: $0, reason: "bad") })
        return (pending, delivered, quarantined, fresh)
    }

    var now: UTCTimestamp { UTCTimestamp(millisecondsSince1970: base.millisecondsSince1970 + 30 * 86_400_000) }

    @Test("by age: old delivered and quarantined records go; pending ones and anything younger stay")
    func byAge() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        let ids = try await fill(cache)
        // A quarantined record younger than the retention period is kept.
        cache.append(hrRecord("AA:00:00:00:00:08", 0, at: UTCTimestamp(millisecondsSince1970: now.millisecondsSince1970 - 60_000)))
        try await cache.flush()
        let young = try #require(try await cache.pendingBatch(limit: 1000).last)
        #expect(young.record.deviceID == "AA:00:00:00:00:08")
        try await cache.quarantine([OutboxRejection(id: young.id, reason: "bad")])

        let report = try await cache.prune(policy: RetentionPolicy(maximumAge: .seconds(7 * 86_400)), now: now)
        #expect(report.deletedByAge == 80)
        #expect(report.deletedQuarantined == 40)
        #expect(report.deletedUnsynced == 0)
        for id in ids.delivered + ids.quarantined { #expect(try await cache.storedRecord(id: id) == nil) }
        for id in ids.pending + ids.fresh + [young.id] { #expect(try await cache.storedRecord(id: id) != nil) }
        let stats = try await cache.stats()
        #expect(stats.pending == 40 && stats.quarantined == 1 && stats.delivered == 10)
    }

    @Test("dry run reports without deleting")
    func dryRun() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        _ = try await fill(cache)
        let report = try await cache.prune(policy: RetentionPolicy(maximumAge: .seconds(86_400)), now: now, dryRun: true)
        #expect(report.deletedByAge == 80)
        #expect(report.dryRun)
        #expect(try await cache.stats().total == 130)
    }

    @Test("delete_unsynced lets age delete pending records too")
    func deleteUnsynced() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        let ids = try await fill(cache)
        let report = try await cache.prune(policy: RetentionPolicy(maximumAge: .seconds(86_400), deleteUnsynced: true), now: now)
        #expect(report.deletedByAge == 120)
        #expect(report.deletedUnsynced == 40)
        #expect(report.deletedQuarantined == 40)
        let left = try await cache.storedRecords(limit: 1000).map(\.id)
        #expect(left == ids.fresh)
    }

    @Test("by size: the oldest delivered records go until under the limit; pending never")
    func bySize() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitRecords: 5000))
        // 12,000 records; the oldest 9,000 delivered.
        for chunk in 0..<12 { cache.append((0..<1000).map { hrRecord("AA:00:00:00:00:0\($0 % 5)", chunk * 1000 + $0) }) }
        try await cache.flush()
        var delivered: [String] = []
        while delivered.count < 9000 {
            let batch = try await cache.pendingBatch(limit: min(500, 9000 - delivered.count))
            try await cache.markDelivered(batch.map(\.id))
            delivered += batch.map(\.id)
        }
        let before = try await cache.stats()
        let limit = before.usedBytes / 2
        let report = try await cache.prune(policy: RetentionPolicy(maximumAge: .seconds(3650 * 86_400), maximumBytes: limit), now: now)
        #expect(report.deletedBySize > 0)
        #expect(report.bytesAfter <= limit)
        #expect(!report.overLimitWithUnsynced)
        let after = try await cache.stats()
        #expect(after.pending == 3000)
        #expect(after.delivered == 9000 - report.deletedBySize)
        // The oldest went first: what is left of the delivered ones is a suffix.
        let remaining = try await cache.storedRecords(limit: 20_000).filter { $0.state == .delivered }.map(\.id)
        #expect(remaining == Array(delivered.suffix(remaining.count)))
        // The file gave the pages back.
        #expect(after.usedBytes < before.usedBytes)

        // A limit below what the pending records need: everything delivered goes, pending stays.
        let tight = try await cache.prune(policy: RetentionPolicy(maximumAge: .seconds(3650 * 86_400), maximumBytes: 4096), now: now)
        #expect(tight.overLimitWithUnsynced)
        let final = try await cache.stats()
        #expect(final.pending == 3000)
        #expect(final.delivered == 0)
    }
}
