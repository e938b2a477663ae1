// SPDX-License-Identifier: MIT

/// The contract's answers (docs/backend-openapi.yaml), as both backends write them with
/// `ContractValue.encoded`; the gateway reads them with its own lenient shapes (Sync's `Wire`).

/// `BatchResult`: what `POST /api/v1/metrics`, `/workouts` and `/profile-metrics` answer.
/// `inserted + duplicates + rejected.count` is the number of items sent.
public struct BatchAnswer: Codable, Sendable, Equatable {
    public struct Rejected: Codable, Sendable, Equatable {
        public var id: String
        public var reason: String

        public init(id: String, reason: String) {
            self.id = id
            self.reason = reason
        }
    }

    public var inserted: Int
    public var duplicates: Int
    public var rejected: [Rejected]

    public init(inserted: Int, duplicates: Int, rejected: [Rejected]) {
        self.inserted = inserted
        self.duplicates = duplicates
        self.rejected = rejected
    }
}

/// `SamplesResult`: the samples sink's answer, which has no `rejected` (a bad sample makes
/// the whole request a 400).
public struct SamplesAnswer: Codable, Sendable, Equatable {
    public var inserted: Int
    public var duplicates: Int

    public init(inserted: Int, duplicates: Int) {
        self.inserted = inserted
        self.duplicates = duplicates
    }
}

/// `PairResult`: the client id a pairing code was exchanged for.
public struct PairAnswer: Codable, Sendable, Equatable {
    public var clientID: String

    enum CodingKeys: String, CodingKey { case clientID = "client_id" }

    public init(clientID: String) { self.clientID = clientID }
}

/// `Error`: every failure's body.
public struct ErrorAnswer: Codable, Sendable, Equatable {
    public var error: String

    public init(_ error: String) { self.error = error }
}
