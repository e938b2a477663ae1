// SPDX-License-Identifier: MIT
import Foundation
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
    public func stats() async throws -> CacheStats {
        var stats = try await pool.read { db -> CacheStats in
            var s = CacheStats()
            var perDevice: [String: DeviceRecordCounts] = [:]
            let rows = try Row.fetchAll(db, sql: """
                SELECT device_id, state, count(*), max(timestamp_ms), sum(client_id IS NULL) FROM record GROUP BY device_id, state
                """)
            for row in rows {
                let device: String = row[0]
                let state = RecordState(column: row[1])
                let n: Int = row[2]
                let last: Int64? = row[3]
                var d = perDevice[device] ?? DeviceRecordCounts(deviceID: device)
                d.total += n
                if let last, last > (d.lastTimestamp?.millisecondsSince1970 ?? .min) {
                    d.lastTimestamp = UTCTimestamp(millisecondsSince1970: last)
                }
                switch state {
                case .pending: d.pending += n; s.pending += n; s.unpairedPending += row[4] as Int
                case .delivered: d.delivered += n; s.delivered += n
                case .quarantined: d.quarantined += n; s.quarantined += n
                }
                s.total += n
                perDevice[device] = d
            }
            s.devices = perDevice.values.sorted { $0.deviceID < $1.deviceID }
            if let row = try Row.fetchOne(db, sql: "SELECT timestamp_ms, stored_ms FROM record WHERE state = 0 ORDER BY sequence LIMIT 1") {
                s.oldestPending = UTCTimestamp(millisecondsSince1970: row[0])
                s.oldestPendingStored = UTCTimestamp(millisecondsSince1970: row[1])
            }
            s.quarantineReasons = try Row.fetchAll(db, sql: """
                SELECT reason, count(*) AS n FROM record WHERE state = 2 GROUP BY reason ORDER BY n DESC LIMIT 10
                """).map { (($0[0] as String?) ?? "", $0[1]) }
            s.usedBytes = try RecordCache.usedBytes(db)
            return s
        }
        stats.buffered = bufferedCount
        stats.encrypted = cipher != nil
        stats.unpairedPolicy = options.unpaired
        for suffix in ["", "-wal", "-shm"] {
            if let size = (try? FileManager.default.attributesOfItem(atPath: path + suffix))?[.size] as? NSNumber {
                stats.fileBytes += size.int64Value
            }
        }
        return stats
    }
}
