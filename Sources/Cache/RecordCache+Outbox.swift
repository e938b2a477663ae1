// SPDX-License-Identifier: MIT
import GRDB
import Outbox
import Synchronization
import WearMetrics

extension RecordCache: SyncOutbox {
    /// The oldest pending records in sequence order, each read back from its typed
    /// columns (opened when sealed). With `unpaired = hold`, records without a member are
    /// skipped (they wait for `pair`). A record that cannot be read back (damaged bytes, or
    /// tampered with under encryption) is quarantined with the reason instead of blocking
    /// the outbox forever.
    public func pendingBatch(limit: Int) async throws -> [OutboxRecord] {
        guard limit > 0 else { return [] }
        // Deliveries the disk could not take yet: record them now if it can, and never
        // hand those records out again meanwhile.
        if deliveredUnrecorded.withLock({ !$0.isEmpty }) { try? await markDelivered([]) }
        let unrecorded = deliveredUnrecorded.withLock { $0 }
        let fetch = limit + min(unrecorded.count, 4 * limit)
        // The outbox tables are small and ordered by sequence; `send` merges both.
        let pending = options.unpaired == .hold
            ? "SELECT sequence FROM outbox ORDER BY sequence LIMIT ?"
            : "SELECT sequence FROM outbox UNION ALL SELECT sequence FROM outbox_unpaired ORDER BY sequence LIMIT ?"
        let sql = """
            SELECT record.*, device.address AS device_address FROM (\(pending)) AS p
            JOIN record ON record.sequence = p.sequence LEFT JOIN device ON device.key = record.device ORDER BY record.sequence
            """
        while true {
            let (batch, bad) = try await database.read { db in
                var batch: [OutboxRecord] = []
                var bad: [OutboxRejection] = []
                let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [fetch])
                while let row = try rows.next() {
                    if batch.count == limit { break }
                    let id: String = row[RecordRow.Columns.id]
                    if !unrecorded.isEmpty, unrecorded.contains(id) { continue }
                    do {
                        let stored = try RecordRow(row: row)
                        guard let address: String = row["device_address"] else {
                            throw CacheError(.unreadablePayload, "record \(id): its device (\(stored.device)) is missing (corrupted)")
                        }
                        let record = try stored.record(address: address, deviceInfo: try self.deviceInfo(stored, db), cipher: self.cipher)
                        batch.append(OutboxRecord(id: id, clientID: stored.clientID, sequence: stored.sequence, record: record))
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
        try await write { db in
            let sequence = try db.cachedStatement(sql: "SELECT sequence FROM record WHERE id = ?")
            let paired = try db.cachedStatement(sql: "DELETE FROM outbox WHERE sequence = ?")
            let unpaired = try db.cachedStatement(sql: "DELETE FROM outbox_unpaired WHERE sequence = ?")
            for id in ids {
                guard let seq = try Int64.fetchOne(sequence, arguments: [id]) else { continue }
                try paired.execute(arguments: [seq])
                try unpaired.execute(arguments: [seq])
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
        try await write { db in
            let sequence = try db.cachedStatement(sql: "SELECT sequence FROM record WHERE id = ? AND state != 2")
            let paired = try db.cachedStatement(sql: "DELETE FROM outbox WHERE sequence = ?")
            let unpaired = try db.cachedStatement(sql: "DELETE FROM outbox_unpaired WHERE sequence = ?")
            let update = try db.cachedStatement(sql: "UPDATE record SET state = 2, reason = ? WHERE sequence = ?")
            for r in rejections {
                guard let seq = try Int64.fetchOne(sequence, arguments: [r.id]) else { continue }
                try paired.execute(arguments: [seq])
                var removed = db.changesCount
                try unpaired.execute(arguments: [seq])
                removed += db.changesCount
                // Only a pending record is quarantined; a delivered one stays delivered.
                guard removed > 0 else { continue }
                try update.execute(arguments: [RecordCache.storedReason(r.reason), seq])
            }
        }
    }
}

extension RecordCache {
    /// `body` in an IMMEDIATE transaction on the writer connection, committed when it
    /// returns: the write lock is taken up front, so another process's lock makes it wait
    /// (the busy timeout) before any work rather than fail halfway.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await database.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }
}
