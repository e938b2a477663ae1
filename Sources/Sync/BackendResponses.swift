// SPDX-License-Identifier: MIT
import JSON
import Outbox

/// What `POST /api/v1/metrics` answered.
public struct MetricsResult: Sendable, Equatable {
    public var inserted: Int
    public var duplicates: Int
    public var rejected: [OutboxRejection]
    public var status: Int

    public init(inserted: Int, duplicates: Int, rejected: [OutboxRejection], status: Int) {
        self.inserted = inserted
        self.duplicates = duplicates
        self.rejected = rejected
        self.status = status
    }
}

/// What the samples endpoint answered.
public struct SamplesResult: Sendable, Equatable {
    public var inserted: Int
    public var duplicates: Int
    public var status: Int

    public init(inserted: Int, duplicates: Int, status: Int) {
        self.inserted = inserted
        self.duplicates = duplicates
        self.status = status
    }
}

/// Wire shapes of the contract's responses (docs/backend-openapi.yaml).
enum Wire {
    struct Metrics: Decodable {
        struct Rejected: Decodable {
            var id: String
            var reason: String?
        }
        var inserted: Int
        var duplicates: Int
        var rejected: [Rejected]?
    }

    struct Samples: Decodable {
        var inserted: Int
        var duplicates: Int
    }

    struct Pair: Decodable {
        var clientID: String
        enum CodingKeys: String, CodingKey { case clientID = "client_id" }
    }

    struct Failure: Decodable {
        var error: String?
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> T? {
        try? JSONValueDecoder().decode(type, from: String(decoding: bytes, as: UTF8.self))
    }

    /// The `{error}` text of a failure body, cut to a readable length; nil if absent.
    static func errorText(_ bytes: [UInt8]) -> String? {
        guard let text = decode(Failure.self, from: bytes)?.error?.trimmingSpaces, !text.isEmpty else { return nil }
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
