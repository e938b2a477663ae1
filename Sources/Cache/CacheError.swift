// SPDX-License-Identifier: MIT

/// A cache operation that could not be done; the message says what to do about it.
public struct CacheError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case noCache, cannotOpen, wrongKey, keyRequired, badKey, writeFailed, unreadablePayload, closed, invalidDocument
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// `open(..., create: false)` on a path with no database.
        public static let noCache = Code(.noCache)
        /// SQLite refused to open or migrate the file.
        public static let cannotOpen = Code(.cannotOpen)
        /// The encryption key is not the one the cache was written with.
        public static let wrongKey = Code(.wrongKey)
        /// The cache holds encrypted payloads but no key was given.
        public static let keyRequired = Code(.keyRequired)
        /// A key that is not 32 bytes.
        public static let badKey = Code(.badKey)
        /// A group commit failed; the records are still buffered and will be retried.
        public static let writeFailed = Code(.writeFailed)
        /// A stored payload failed authentication or decoding.
        public static let unreadablePayload = Code(.unreadablePayload)
        /// The cache was closed.
        public static let closed = Code(.closed)
        /// `putDocument` with text that is not a JSON object carrying the same `id`.
        public static let invalidDocument = Code(.invalidDocument)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "cache error: \(message)" }
}
