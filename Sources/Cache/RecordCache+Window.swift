// SPDX-License-Identifier: MIT
import GRDB
import WearMetrics

extension RecordCache {
    /// The devices with at least one record timestamped within `[fromMs, toMs]`: whose
    /// workouts a class yields.
    public func devices(heardFrom fromMs: Int64, to toMs: Int64) async throws -> [String] {
        try await database.read { db in
            try String.fetchAll(db, sql: """
                SELECT DISTINCT device.address FROM record JOIN device ON device.key = record.device
                WHERE record.timestamp_ms BETWEEN ? AND ? ORDER BY device.address
                """, arguments: [fromMs, toMs])
        }
    }

    /// The records of `devices` timestamped within `[fromMs, toMs]`, per device, oldest
    /// first (by timestamp, then by arrival): a workout is computed from these, so it is
    /// the same after a restart as it would have been without one.
    ///
    /// The window is found by the timestamp index and rows of other devices are skipped
    /// by their device key without being read back. There is no index by device: its
    /// insertion points, one per strap, would dirty a page per record on every commit
    /// (docs/cache.md, SD-card wear). Callers ask for a few devices at a time so that
    /// memory stays bounded.
    public func records(devices: [String], from fromMs: Int64, to toMs: Int64) async throws -> [String: [StoredRecord]] {
        guard !devices.isEmpty else { return [:] }
        return try await database.read { db in
            let keys = try Int64.fetchAll(db, sql: "SELECT key FROM device WHERE address IN (\(devices.map { _ in "?" }.joined(separator: ",")))",
                                          arguments: StatementArguments(devices))
            guard !keys.isEmpty else { return [:] }
            var out: [String: [StoredRecord]] = [:]
            let rows = try Row.fetchCursor(db, sql: """
                \(RecordCache.recordSelect)
                WHERE record.timestamp_ms BETWEEN ? AND ? AND record.device IN (\(keys.map(String.init).joined(separator: ",")))
                ORDER BY record.timestamp_ms, record.sequence
                """, arguments: [fromMs, toMs])
            while let row = try rows.next() {
                let stored = try self.decode(row, db)
                out[stored.record.deviceID, default: []].append(stored)
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
        try await database.read { db in
            try Int64.fetchOne(db, sql: "SELECT MAX(sequence) FROM record WHERE timestamp_ms BETWEEN ? AND ?", arguments: [fromMs, toMs]) ?? 0
        }
    }
}
