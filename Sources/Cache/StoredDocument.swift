// SPDX-License-Identifier: MIT
import Outbox
import WearMetrics

/// A document as the cache holds it, for `blegate workouts` and tests.
public struct StoredDocument: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case pending, delivered, quarantined
    }

    public var id: String
    public var kind: DocumentKind
    public var json: String
    public var revision: Int
    public var state: State
    /// Why the backend refused it (quarantined only).
    public var reason: String?
    /// When the backend last confirmed it (nil while pending or quarantined).
    public var deliveredAt: UTCTimestamp?
    /// When this revision was stored.
    public var storedAt: UTCTimestamp
}

/// Pending, delivered and quarantined documents of one kind.
public struct DocumentCounts: Sendable, Equatable {
    public var pending = 0
    public var delivered = 0
    public var quarantined = 0

    public init(pending: Int = 0, delivered: Int = 0, quarantined: Int = 0) {
        self.pending = pending
        self.delivered = delivered
        self.quarantined = quarantined
    }
}
