// SPDX-License-Identifier: MIT
import GRDB

extension RecordCache {
    /// The devices with at least one record timestamped within `[fromMs, toMs]`: whose
    /// workouts a class yields.
    public func devices(heardFrom fromMs: Int64, to toMs: Int64) async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT device_id FROM record WHERE timestamp_ms BETWEEN ? AND ? ORDER BY device_id",
                                arguments: [fromMs, toMs])
        }
    }

    /// One device's records timestamped within `[fromMs, toMs]`, oldest first (by
    /// timestamp, then by arrival): a workout is computed from these, so it is the same
    /// after a restart as it would have been without one.
    public func records(device: String, from fromMs: Int64, to toMs: Int64) async throws -> [StoredRecord] {
        let cipher = self.cipher
        return try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(RecordCache.recordColumns) FROM record INDEXED BY record_device_time
                WHERE device_id = ? AND timestamp_ms BETWEEN ? AND ? ORDER BY timestamp_ms, sequence
                """, arguments: [device, fromMs, toMs])
                .map { try RecordCache.decode($0, cipher: cipher) }
        }
    }
}
