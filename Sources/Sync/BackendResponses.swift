// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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

    /// nil for anything that is not JSON of the shape: the callers turn that into
    /// `invalidResponse` with the endpoint and status.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> T? {
        try? JSONDecoder().decode(type, from: Data(bytes))
    }

    /// `Encodable` bodies as compact JSON with sorted keys: the same request is always the
    /// same text.
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The bodies are strings, numbers and arrays of them: encoding them cannot fail.
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// `POST /api/v1/pair`'s body; a device's unknown name or model is null.
    struct PairRequest: Encodable {
        struct Device: Encodable {
            var address: String
            var name: String?
            var model: String?

            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(address, forKey: .address)
                try c.encode(name, forKey: .name)
                try c.encode(model, forKey: .model)
            }

            enum CodingKeys: String, CodingKey { case address, name, model }
        }

        var code: String
        var device: Device
    }

    /// The `{error}` text of a failure body, cut to a readable length; nil if absent.
    static func errorText(_ bytes: [UInt8]) -> String? {
        guard let text = decode(Failure.self, from: bytes)?.error?.trimmingSpaces, !text.isEmpty else { return nil }
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
