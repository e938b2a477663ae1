// SPDX-License-Identifier: MIT
import GRDB
import Outbox
import WearMetrics

extension RecordCache: SyncOutbox {
    /// The oldest pending records in sequence order. With `unpaired = hold`, records
    /// without a member are skipped (they wait for `pair`). A payload that cannot be read
    /// back (corrupted, or tampered with under encryption) is quarantined with the
    /// reason instead of blocking the outbox forever.
    public func pendingBatch(limit: Int) async throws -> [OutboxRecord] {
        guard limit > 0 else { return [] }
        let cipher = self.cipher
        let sql = options.unpaired == .hold
            ? "SELECT \(RecordCache.recordColumns) FROM record WHERE state = 0 AND client_id IS NOT NULL ORDER BY sequence LIMIT ?"
            : "SELECT \(RecordCache.recordColumns) FROM record WHERE state = 0 ORDER BY sequence LIMIT ?"
        while true {
            let (batch, bad) = try await pool.read { db in
                var batch: [OutboxRecord] = []
                var bad: [OutboxRejection] = []
                for row in try Row.fetchAll(db, sql: sql, arguments: [limit]) {
                    do {
                        let s = try RecordCache.decode(row, cipher: cipher)
                        batch.append(OutboxRecord(id: s.id, clientID: s.clientID, sequence: s.sequence, record: s.record))
                    } catch {
                        bad.append(OutboxRejection(id: row[1], reason: "unreadable in the cache: \((error as? CacheError)?.message ?? "\(error)")"))
                    }
                }
                return (batch, bad)
            }
            if bad.isEmpty { return batch }
            try await quarantine(bad)
        }
    }

    public func markDelivered(_ ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        let now = UTCTimestamp.wallClock.millisecondsSince1970
        try await pool.write { db in
            let update = try db.cachedStatement(sql: "UPDATE record SET state = 1, delivered_ms = ? WHERE id = ? AND state = 0")
            for id in ids {
                update.setUncheckedArguments([now, id])
                try update.execute()
            }
        }
    }

    public func quarantine(_ rejections: [OutboxRejection]) async throws {
        guard !rejections.isEmpty else { return }
        try await pool.write { db in
            let update = try db.cachedStatement(sql: "UPDATE record SET state = 2, reason = ? WHERE id = ? AND state = 0")
            for r in rejections {
                update.setUncheckedArguments([r.reason, r.id])
                try update.execute()
            }
        }
    }
}
