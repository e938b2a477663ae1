// SPDX-License-Identifier: MIT
import Foundation

extension RecordCache {
    /// `saveMeta(key:bytes:)` for callers that hold `Data`.
    public func saveMeta(key: String, value: Data) async throws {
        try await saveMeta(key: key, bytes: Array(value))
    }

    /// `loadMetaBytes(key:)` as `Data`.
    public func loadMeta(key: String) async throws -> Data? {
        try await loadMetaBytes(key: key).map { Data($0) }
    }
}
