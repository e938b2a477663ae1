// SPDX-License-Identifier: MIT
import JSON
import Outbox
import SQLite
import Synchronization
import WearMetrics

extension RecordCache: SyncOutbox {
    /// The oldest pending records in sequence order, each with its stored JSON as it is
    /// (decrypted when encrypted, checked to be one JSON object, never parsed into a
    /// record). With `unpaired = hold`, records without a member are skipped (they wait
    /// for `pair`). A payload that cannot be read back (corrupted, or tampered with under
    /// encryption) is quarantined with the reason instead of blocking the outbox forever.
    public func pendingBatch(limit: Int) async throws -> [OutboxRecord] {
        guard limit > 0 else { return [] }
        // Deliveries the disk could not take yet: record them now if it can, and never
        // hand those records out again meanwhile.
        if deliveredUnrecorded.withLock({ !$0.isEmpty }) { try? await markDelivered([]) }
        let unrecorded = deliveredUnrecorded.withLock { $0 }
        let fetch = limit + min(unrecorded.count, 4 * limit)
        let cipher = self.cipher
        // The outbox tables are small and ordered by sequence; `send` merges both.
        let pending = options.unpaired == .hold
            ? "SELECT sequence FROM outbox ORDER BY sequence LIMIT ?"
            : "SELECT sequence FROM outbox UNION ALL SELECT sequence FROM outbox_unpaired ORDER BY sequence LIMIT ?"
        let sql = "SELECT \(RecordCache.recordColumns) FROM (\(pending)) AS p JOIN record ON record.sequence = p.sequence ORDER BY record.sequence"
        while true {
            let (batch, bad) = try await reader.read { db in
                var batch: [OutboxRecord] = []
                var bad: [OutboxRejection] = []
                let rows = try db.cachedStatement(sql)
                try rows.bind([fetch])
                defer { rows.reset() }
                while try rows.step() {
                    if batch.count == limit { break }
                    let id = rows.text(1)
                    if !unrecorded.isEmpty, unrecorded.contains(id) { continue }
                    do {
                        let json = try RecordCache.payloadText(id: id, encrypted: rows.bool(5), payload: rows.blob(6), cipher: cipher)
                        do {
                            try JSONValue.validateObject(json)
                        } catch {
                            throw CacheError(.unreadablePayload, "record \(id): \(error)")
                        }
                        batch.append(OutboxRecord(id: id, clientID: rows.optionalText(2), sequence: rows.int64(0), json: json))
                    } catch {
                        bad.append(OutboxRejection(id: id, reason: "unreadable in the cache: \((error as? CacheError)?.message ?? "\(error)")"))
                    }
                }
                return (batch, bad)
            }
            if bad.isEmpty { return batch }
            try await quarantine(bad)
        }
    }

    /// Pending → delivered: the records leave the outbox tables; their rows are not
    /// rewritten (on an SD card, a rewrite per record costs more than the record).
    ///
    /// When the disk cannot take the change (full, failing), the ids are kept in memory,
    /// left out of `pendingBatch`, and written with the next call: the backend already
    /// holds those records, and sending them again and again would not free anything.
    public func markDelivered(_ ids: [String]) async throws {
        let ids = deliveredUnrecorded.withLock { $0.isEmpty ? ids : ids + $0 }
        guard !ids.isEmpty else { return }
        do {
            try await recordDelivered(ids)
            deliveredUnrecorded.withLock { $0.subtract(ids) }
        } catch {
            deliveredUnrecorded.withLock { $0.formUnion(ids) }
        }
    }

    private func recordDelivered(_ ids: [String]) async throws {
        try await writer.write { db in
            let sequence = try db.cachedStatement("SELECT sequence FROM record WHERE id = ?")
            let paired = try db.cachedStatement("DELETE FROM outbox WHERE sequence = ?")
            let unpaired = try db.cachedStatement("DELETE FROM outbox_unpaired WHERE sequence = ?")
            for id in ids {
                guard let seq = try sequence.scalarInt64([id]) else { continue }
                try paired.execute([seq])
                try unpaired.execute([seq])
            }
        }
    }

    /// The longest rejection reason kept, in characters.
    public static let reasonLimit = 500

    /// A reason as stored: the backend's text is outside input, and a backend that
    /// answers every rejection with a page of text would otherwise store that page once
    /// per record. Cut to `reasonLimit` characters, the cut marked.
    static func storedReason(_ reason: String) -> String {
        var end = reason.startIndex
        var count = 0
        while end < reason.endIndex, count < reasonLimit {
            reason.formIndex(after: &end)
            count += 1
        }
        guard end < reason.endIndex else { return reason }
        return reason[..<end] + "… (cut at \(reasonLimit) characters)"
    }

    /// Pending → quarantined with the reason (the row is rewritten: rare).
    public func quarantine(_ rejections: [OutboxRejection]) async throws {
        guard !rejections.isEmpty else { return }
        try await writer.write { db in
            let sequence = try db.cachedStatement("SELECT sequence FROM record WHERE id = ? AND state != 2")
            let paired = try db.cachedStatement("DELETE FROM outbox WHERE sequence = ?")
            let unpaired = try db.cachedStatement("DELETE FROM outbox_unpaired WHERE sequence = ?")
            let update = try db.cachedStatement("UPDATE record SET state = 2, reason = ? WHERE sequence = ?")
            for r in rejections {
                guard let seq = try sequence.scalarInt64([r.id]) else { continue }
                try paired.execute([seq])
                var removed = db.changes
                try unpaired.execute([seq])
                removed += db.changes
                // Only a pending record is quarantined; a delivered one stays delivered.
                guard removed > 0 else { continue }
                try update.execute([RecordCache.storedReason(r.reason), seq])
            }
        }
    }
}
