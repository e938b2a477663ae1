// SPDX-License-Identifier: MIT
import SQLite

extension RecordCache {
    /// The members' records (client id set) timestamped within `window` milliseconds of the
    /// newest record, oldest first, whose JSON may contain one of `markers` (e.g. `"ble_wss"`;
    /// the caller checks the records: a few others can come along).
    ///
    /// The window is found by the timestamp index and the markers are matched by SQLite on
    /// the stored bytes, so rows of other records are neither decoded nor decrypted
    /// (encrypted rows cannot be matched that way: they are opened and returned, and the
    /// caller checks them).
    public func memberRecords(withinLast window: Int64, containing markers: [String]) async throws -> [StoredRecord] {
        guard !markers.isEmpty else { return [] }
        let cipher = self.cipher
        // Plain rows hold the marker; compact ones (CompactRecordText) the part of it that
        // no piece can cover, or, for a marker without one, every compact row is a candidate.
        var patterns: [[UInt8]] = []
        var anyCompact = false
        for m in markers {
            patterns.append(Array(m.utf8))
            if let core = CompactRecordText.literalCore(of: Array(m.utf8)) { patterns.append(core) } else { anyCompact = true }
        }
        var match = patterns.map { _ in "instr(record.payload, ?) > 0" }.joined(separator: " OR ")
        if anyCompact { match += " OR substr(record.payload, 1, 1) = x'01'" }
        return try await reader.read { [patterns, match] db in
            guard let newest = try db.scalarInt64("SELECT MAX(timestamp_ms) FROM record") else { return [] }
            var arguments: [any SQLiteBindable] = [newest - window]
            arguments += patterns.map { $0 as any SQLiteBindable }
            return try db.rows("""
                SELECT \(RecordCache.recordColumns) FROM record
                WHERE timestamp_ms >= ? AND client_id IS NOT NULL AND (record.encrypted = 1 OR \(match))
                ORDER BY timestamp_ms, sequence
                """, arguments) { try RecordCache.decode($0, cipher: cipher) }
        }
    }
}
