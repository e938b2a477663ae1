// SPDX-License-Identifier: MIT
import GRDB
import WearMetrics

extension RecordCache {
    /// The members' records (client id set) of `sources` (e.g. `ble_wss`) timestamped within
    /// `window` milliseconds of the newest record, oldest first.
    ///
    /// The window is found by the timestamp index and the source by its column, so rows
    /// of other records are neither read back nor opened.
    public func memberRecords(withinLast window: Int64, sources: [String]) async throws -> [StoredRecord] {
        guard !sources.isEmpty else { return [] }
        let codes = Set(sources.map(SourceKind.code))
        let names = Set(sources)
        let list = codes.sorted().map(String.init).joined(separator: ",")
        return try await database.read { db in
            guard let newest = try Int64.fetchOne(db, sql: "SELECT MAX(timestamp_ms) FROM record") else { return [] }
            return try self.decodeAll(Row.fetchCursor(db, sql: """
                \(RecordCache.recordSelect)
                WHERE record.timestamp_ms >= ? AND record.client_id IS NOT NULL AND record.source IN (\(list))
                ORDER BY record.timestamp_ms, record.sequence
                """, arguments: [newest - window]), db)
                // A source without a code is kept as text: the ones named, not all such.
                .filter { names.contains($0.record.source) }
        }
    }
}
