// SPDX-License-Identifier: MIT
import SystemSupport
import SQLite
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
    public func stats() async throws -> CacheStats {
        var stats = try await reader.read { db -> CacheStats in
            var s = CacheStats()
            var perDevice: [String: DeviceRecordCounts] = [:]
            // Totals and quarantined from the records, pending from the outbox tables;
            // delivered is the rest.
            try db.forEachRow("""
                SELECT device_id, count(*), max(timestamp_ms), sum(state = 2) FROM record GROUP BY device_id
                """) { row in
                let device = row.text(0)
                var d = DeviceRecordCounts(deviceID: device)
                d.total = row.int(1)
                d.lastTimestamp = row.optionalInt64(2).map(UTCTimestamp.init(millisecondsSince1970:))
                d.quarantined = row.int(3)
                perDevice[device] = d
            }
            try db.forEachRow("""
                SELECT record.device_id, count(*), sum(p.unpaired)
                FROM (SELECT sequence, 0 AS unpaired FROM outbox UNION ALL SELECT sequence, 1 FROM outbox_unpaired) AS p
                JOIN record ON record.sequence = p.sequence GROUP BY record.device_id
                """) { row in
                let device = row.text(0)
                let n = row.int(1)
                perDevice[device, default: DeviceRecordCounts(deviceID: device)].pending = n
                s.pending += n
                s.unpairedPending += row.int(2)
            }
            for (device, var d) in perDevice {
                d.delivered = d.total - d.pending - d.quarantined
                perDevice[device] = d
                s.total += d.total
                s.delivered += d.delivered
                s.quarantined += d.quarantined
            }
            s.devices = perDevice.values.sorted { $0.deviceID < $1.deviceID }
            try db.forEachRow("""
                SELECT record.timestamp_ms, record.stored_ms FROM record
                WHERE record.sequence = (SELECT min(sequence) FROM (SELECT min(sequence) AS sequence FROM outbox UNION ALL SELECT min(sequence) FROM outbox_unpaired))
                """) { row in
                s.oldestPending = UTCTimestamp(millisecondsSince1970: row.int64(0))
                s.oldestPendingStored = UTCTimestamp(millisecondsSince1970: row.int64(1))
            }
            s.quarantineReasons = try db.rows("""
                SELECT reason, count(*) AS n FROM record WHERE state = 2 GROUP BY reason ORDER BY n DESC LIMIT 10
                """) { (reason: $0.text(0), count: $0.int(1)) }
            s.usedBytes = try RecordCache.usedBytes(db)
            return s
        }
        stats.buffered = bufferedCount
        stats.encrypted = cipher != nil
        stats.unpairedPolicy = options.unpaired
        for suffix in ["", "-wal", "-shm"] {
            stats.fileBytes += FilePaths.size(path + suffix) ?? 0
        }
        return stats
    }
}
