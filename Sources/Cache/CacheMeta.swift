// SPDX-License-Identifier: MIT
import Foundation
import GRDB

extension RecordCache {
    /// Stores a small blob under `key` in the cache's own table, so state that must
    /// outlive the process (the last sync and errors `blegate status` shows when the
    /// gateway is stopped) lives in the same file as the records it describes.
    public func saveMeta(key: String, value: Data) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO cache_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           arguments: [key, value])
        }
    }

    /// The blob saved under `key`, if any.
    public func loadMeta(key: String) async throws -> Data? {
        try await pool.read { db in
            try Data.fetchOne(db, sql: "SELECT value FROM cache_meta WHERE key = ?", arguments: [key])
        }
    }
}
