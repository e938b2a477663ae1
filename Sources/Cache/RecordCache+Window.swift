// SPDX-License-Identifier: MIT
import SQLite

extension RecordCache {
    /// The devices with at least one record timestamped within `[fromMs, toMs]`: whose
    /// workouts a class yields.
    public func devices(heardFrom fromMs: Int64, to toMs: Int64) async throws -> [String] {
        try await reader.read { db in
            try db.rows("SELECT DISTINCT device_id FROM record WHERE timestamp_ms BETWEEN ? AND ? ORDER BY device_id",
                        [fromMs, toMs]) { $0.text(0) }
        }
    }

    /// The records of `devices` timestamped within `[fromMs, toMs]`, per device, oldest
    /// first (by timestamp, then by arrival): a workout is computed from these, so it is
    /// the same after a restart as it would have been without one.
    ///
    /// The window is found by the timestamp index and rows of other devices are skipped
    /// without being decoded. There is no index by device: its insertion points, one per
    /// strap, would dirty a page per record on every commit (docs/cache.md, SD-card wear).
    /// Callers ask for a few devices at a time so that memory stays bounded.
    public func records(devices: [String], from fromMs: Int64, to toMs: Int64) async throws -> [String: [StoredRecord]] {
        guard !devices.isEmpty else { return [:] }
        let cipher = self.cipher
        let placeholders = Array(repeating: "?", count: devices.count).joined(separator: ",")
        return try await reader.read { db in
            var arguments: [any SQLiteBindable] = [fromMs, toMs]
            arguments += devices.map { $0 as any SQLiteBindable }
            var out: [String: [StoredRecord]] = [:]
            try db.forEachRow("""
                SELECT \(RecordCache.recordColumns), record.device_id FROM record
                WHERE timestamp_ms BETWEEN ? AND ? AND device_id IN (\(placeholders)) ORDER BY timestamp_ms, sequence
                """, arguments) { row in
                out[row.text(7), default: []].append(try RecordCache.decode(row, cipher: cipher))
            }
            return out
        }
    }

    /// One device's records within `[fromMs, toMs]` (see `records(devices:from:to:)`).
    public func records(device: String, from fromMs: Int64, to toMs: Int64) async throws -> [StoredRecord] {
        try await records(devices: [device], from: fromMs, to: toMs)[device] ?? []
    }

    /// The newest sequence among records timestamped within `[fromMs, toMs]` (0 for none):
    /// a class's workouts need computing again only when it grew (late records).
    public func lastSequence(from fromMs: Int64, to toMs: Int64) async throws -> Int64 {
        try await reader.read { db in
            try db.scalarInt64("SELECT MAX(sequence) FROM record WHERE timestamp_ms BETWEEN ? AND ?", [fromMs, toMs]) ?? 0
        }
    }
}
