// SPDX-License-Identifier: MIT
import GRDB
import WearMetrics
import Timing

/// What one retention pass deleted (or, for a dry run, would delete).
public struct PruneReport: Sendable, Equatable {
    /// Delivered records older than the maximum age.
    public var deletedByAge = 0
    /// Oldest delivered records deleted to get under the size limit.
    public var deletedBySize = 0
    /// Of the above, records that were pending, or quarantined and deleted for size (only
    /// with `deleteUnsynced`).
    public var deletedUnsynced = 0
    /// Of `deletedByAge`, quarantined records (the backend refused them; they go with age
    /// like delivered ones).
    public var deletedQuarantined = 0
    /// Database bytes in use (pages minus free pages) before and after.
    public var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 = 0
    /// Still above the size limit because only unsynced records are left to delete.
    public var overLimitWithUnsynced = false
    public var dryRun = false

    public var deleted: Int { deletedByAge + deletedBySize }
}

extension RecordCache {
    /// Applies retention: by age (record timestamp), then by size (oldest first). Age takes
    /// delivered and quarantined records; size takes delivered ones. Pending records (and
    /// quarantined ones for size) are only deleted when `deleteUnsynced` is set. A dry run
    /// does the same work in a transaction that is rolled back.
    public func prune(policy: RetentionPolicy? = nil, now: UTCTimestamp? = nil, dryRun: Bool = false) async throws -> PruneReport {
        let policy = policy ?? options.retention
        let cutoff = (now ?? .now).millisecondsSince1970 - policy.maximumAge.milliseconds
        var report = try await database.writeWithoutTransaction { db -> PruneReport in
            var report = PruneReport()
            report.dryRun = dryRun
            try db.inTransaction(.immediate) {
                report.bytesBefore = try RecordCache.usedBytes(db)
                // Deleting a record removes it from the outbox tables too (a trigger).
                // A quarantined record is kept for the retention period (someone may look
                // into why the backend refused it), then goes like a delivered one.
                let scope = policy.deleteUnsynced ? "" : "AND \(CacheSchema.isDelivered)"
                let ageScope = policy.deleteUnsynced ? "" : "AND (record.state = \(CacheSchema.quarantined) OR \(CacheSchema.isDelivered))"
                report.deletedQuarantined = try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE timestamp_ms < ? AND state = \(CacheSchema.quarantined)", arguments: [cutoff]) ?? 0
                if policy.deleteUnsynced {
                    report.deletedUnsynced += try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE timestamp_ms < ? AND state != \(CacheSchema.quarantined) AND NOT (\(CacheSchema.isDelivered))", arguments: [cutoff]) ?? 0
                }
                try db.execute(sql: "DELETE FROM record WHERE timestamp_ms < ? \(ageScope)", arguments: [cutoff])
                report.deletedByAge = db.changesCount

                // By size: estimate how many of the oldest rows free the excess, delete,
                // measure again (a few rounds converge; page fill varies).
                for _ in 0..<8 {
                    let used = try RecordCache.usedBytes(db)
                    guard used > policy.maximumBytes else { break }
                    let count = try Int64.fetchOne(db, sql: "SELECT count(*) FROM record") ?? 0
                    guard count > 0 else { break }
                    let perRecord = max(1, Double(used) / Double(count))
                    let n = max(1, Int((Double(used - policy.maximumBytes) / perRecord * 1.05).rounded(.up)))
                    let victims = "SELECT sequence FROM record WHERE 1 \(scope) ORDER BY sequence LIMIT \(n)"
                    if policy.deleteUnsynced {
                        report.deletedUnsynced += try Int.fetchOne(db, sql: "SELECT count(*) FROM record WHERE sequence IN (\(victims)) AND NOT (\(CacheSchema.isDelivered))") ?? 0
                    }
                    try db.execute(sql: "DELETE FROM record WHERE sequence IN (\(victims))")
                    let deleted = db.changesCount
                    report.deletedBySize += deleted
                    if deleted == 0 { break }
                }
                report.bytesAfter = try RecordCache.usedBytes(db)
                report.overLimitWithUnsynced = report.bytesAfter > policy.maximumBytes
                return dryRun ? .rollback : .commit
            }
            if !dryRun, report.deleted > 0 {
                // Give the freed pages back to the file system. The WAL keeps its size
                // (RESTART, not TRUNCATE): on a full disk that space is what lets the
                // cache delete delivered records to make room.
                try db.execute(sql: "PRAGMA incremental_vacuum")
                try db.execute(sql: "PRAGMA wal_checkpoint(RESTART)")
            }
            return report
        }
        if !dryRun { report.bytesAfter = try await database.read { try RecordCache.usedBytes($0) } }
        return report
    }

    /// Pages in use × page size: the database's real size, whatever the free list holds.
    static func usedBytes(_ db: Database) throws -> Int64 {
        let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let size = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return (pages - free) * size
    }
}

extension RecordCache {
    /// Applies retention now and then every `interval` until the task is cancelled;
    /// a failed pass is reported to `onError` and retried at the next interval.
    public func runRetention(every interval: Duration, onReport: @Sendable (PruneReport) -> Void = { _ in },
                             onError: @Sendable (any Error) -> Void = { _ in }) async {
        while !Task.isCancelled {
            do {
                onReport(try await prune())
            } catch {
                onError(error)
            }
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
        }
    }
}
