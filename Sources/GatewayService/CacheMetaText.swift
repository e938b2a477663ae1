// SPDX-License-Identifier: MIT
import Cache
import Foundation

/// The cache's meta values as text, the one place the run path meets Foundation's `Data`
/// (the cache's meta API takes and gives `Data`); the state kept there is JSON or lines.
extension RecordCache {
    func loadMetaText(key: String) async throws -> String? {
        try await loadMeta(key: key).map { String(decoding: $0, as: UTF8.self) }
    }

    func saveMetaText(key: String, _ text: String) async throws {
        try await saveMeta(key: key, value: Data(text.utf8))
    }
}
