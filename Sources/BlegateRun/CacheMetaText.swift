// SPDX-License-Identifier: MIT
import Cache

/// The cache's meta values as text: the state kept there (saved service state, the class
/// book, learned maximum heart rates) is JSON or lines.
extension RecordCache {
    func loadMetaText(key: String) async throws -> String? {
        try await loadMetaBytes(key: key).map { String(decoding: $0, as: UTF8.self) }
    }

    func saveMetaText(key: String, _ text: String) async throws {
        try await saveMeta(key: key, bytes: Array(text.utf8))
    }
}
