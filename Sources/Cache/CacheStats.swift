// SPDX-License-Identifier: MIT
import SystemSupport
import GRDB
import WearMetrics

/// Counts per device.
public struct DeviceRecordCounts: Sendable, Equatable {
    public var deviceID: String
    public var total = 0
    public var pending = 0
    public var delivered = 0
    public var quarantined = 0
    public var lastTimestamp: UTCTimestamp?
}

/// A snapshot of the cache for `blegate cache stats` and the status socket.
public struct CacheStats: Sendable, Equatable {
    public var total = 0
    /// Not yet delivered, including `held`.
    public var pending = 0
    /// Pending records without a member, which `unpaired = hold` keeps back.
    public var unpairedPending = 0
    public var delivered = 0
    public var quarantined = 0
    /// Timestamp and storage time of the oldest pending record.
    public var oldestPending: UTCTimestamp?
    public var oldestPendingStored: UTCTimestamp?
    /// Database, WAL and shared-memory files together.
    public var fileBytes: Int64 = 0
    /// Pages in use × page size.
    public var usedBytes: Int64 = 0
    /// Appended, not yet committed.
    public var buffered = 0
    public var encrypted = false
    public var unpairedPolicy: UnpairedRecordPolicy = .send
    /// Quarantine reasons with their counts, most frequent first (at most 10).
    public var quarantineReasons: [(reason: String, count: Int)] = []
    public var devices: [DeviceRecordCounts] = []

    /// Seconds since the oldest pending record was stored (how far sync is behind).
    public func oldestPendingAge(now: UTCTimestamp) -> Double? {
        oldestPendingStored.map { Double(now.millisecondsSince1970 - $0.millisecondsSince1970) / 1000 }
    }

    public static func == (a: CacheStats, b: CacheStats) -> Bool {
        a.total == b.total && a.pending == b.pending && a.unpairedPending == b.unpairedPending && a.delivered == b.delivered
            && a.quarantined == b.quarantined && a.oldestPending == b.oldestPending && a.fileBytes == b.fileBytes
            && a.devices == b.devices && a.quarantineReasons.map(\.reason) == b.quarantineReasons.map(\.reason)
    }
}

extension RecordCache {
    /// The outbox alone: pending and unpaired counts, the oldest pending record and the
    /// file sizes, from the outbox tables and their keys. `stats()` also counts every record
    /// per device, a scan of the whole cache: too much for a scrape every 15 s of a cache
    /// holding a week. `total`, `delivered`, `quarantined` and `devices` stay 0 here.
    public func outboxStats() async throws -> CacheStats {
        var stats = try await database.read { db -> CacheStats in
            var s = CacheStats()
            s.pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0
            s.unpairedPending = try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox_unpaired") ?? 0
            s.pending += s.unpairedPending
            try Self.readOldestPending(db, into: &s)
            return s
        }
        addLiveFigures(&stats)
        return stats
    }

    private static func readOldestPending(_ db: Database, into s: inout CacheStats) throws {
        if let row = try Row.fetchOne(db, sql: """
            SELECT record.timestamp_ms, record.stored_ms FROM record
            WHERE record.sequence = (SELECT min(sequence) FROM (SELECT min(sequence) AS sequence FROM outbox UNION ALL SELECT min(sequence) FROM outbox_unpaired))
            """) {
            s.oldestPending = UTCTimestamp(millisecondsSince1970: row[0])
            s.oldestPendingStored = UTCTimestamp(millisecondsSince1970: row[1])
        }
    }

    private func addLiveFigures(_ stats: inout CacheStats) {
        stats.buffered = bufferedCount
        stats.encrypted = cipher != nil
        stats.unpairedPolicy = options.unpaired
        for suffix in ["", "-wal", "-shm"] {
            stats.fileBytes += FilePaths.size(path + suffix) ?? 0
        }
    }

    public func stats() async throws -> CacheStats {
        var stats = try await database.read { db -> CacheStats in
            var s = CacheStats()
            var perDevice: [String: DeviceRecordCounts] = [:]
            // Totals and quarantined from the records, pending from the outbox tables;
            // delivered is the rest.
            for row in try Row.fetchAll(db, sql: """
                SELECT device.address, count(*), max(record.timestamp_ms), sum(record.state = 2)
                FROM record JOIN device ON device.key = record.device GROUP BY record.device
                """) {
                let device: String = row[0]
                var d = DeviceRecordCounts(deviceID: device)
                d.total = row[1]
                d.lastTimestamp = (row[2] as Int64?).map(UTCTimestamp.init(millisecondsSince1970:))
                d.quarantined = row[3]
                perDevice[device] = d
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT device.address, count(*), sum(p.unpaired)
                FROM (SELECT sequence, 0 AS unpaired FROM outbox UNION ALL SELECT sequence, 1 FROM outbox_unpaired) AS p
                JOIN record ON record.sequence = p.sequence JOIN device ON device.key = record.device GROUP BY record.device
                """) {
                let device: String = row[0]
                let n: Int = row[1]
                perDevice[device, default: DeviceRecordCounts(deviceID: device)].pending = n
                s.pending += n
                s.unpairedPending += row[2] as Int
            }
            for (device, var d) in perDevice {
                d.delivered = d.total - d.pending - d.quarantined
                perDevice[device] = d
                s.total += d.total
                s.delivered += d.delivered
                s.quarantined += d.quarantined
            }
            s.devices = perDevice.values.sorted { $0.deviceID < $1.deviceID }
            try Self.readOldestPending(db, into: &s)
            s.quarantineReasons = try Row.fetchAll(db, sql: """
                SELECT reason, count(*) AS n FROM record WHERE state = 2 GROUP BY reason ORDER BY n DESC LIMIT 10
                """).map { (reason: ($0[0] as String?) ?? "", count: $0[1] as Int) }
            s.usedBytes = try RecordCache.usedBytes(db)
            return s
        }
        addLiveFigures(&stats)
        return stats
    }
}
