// SPDX-License-Identifier: MIT

/// What a document in the outbox is; each kind has its own backend endpoint.
public enum DocumentKind: String, Sendable, Hashable, CaseIterable {
    /// A computed workout (`POST`/`PUT /api/v1/workouts`).
    case workout
    /// A member's height, weight or body fat (`POST /api/v1/profile-metrics`).
    case profileMetric = "profile_metric"
}

/// One document waiting to leave the gateway: JSON text made elsewhere (the workout
/// builder, the profile-metric mapper) that the sync engine sends as it is, without
/// parsing or re-encoding it.
public struct OutboxDocument: Sendable, Equatable {
    /// The document's own `id` (a stable UUID): the backend's idempotency key.
    public var id: String
    public var kind: DocumentKind
    /// The JSON object, exactly as stored.
    public var json: String
    /// 1 for the first version; each changed version stored under the same id adds 1.
    /// Later revisions are corrections the backend already holds an earlier form of.
    public var revision: Int

    public init(id: String, kind: DocumentKind, json: String, revision: Int) {
        self.id = id
        self.kind = kind
        self.json = json
        self.revision = revision
    }

    /// The revision this document is at, for `markDocumentsDelivered`.
    public var mark: DocumentRevision { DocumentRevision(id: id, revision: revision) }
}

/// A document at one revision: marking it delivered leaves a newer revision, stored while
/// the older one was in flight, pending.
public struct DocumentRevision: Sendable, Equatable, Hashable {
    public var id: String
    public var revision: Int

    public init(id: String, revision: Int) {
        self.id = id
        self.revision = revision
    }
}

/// Why the backend refused one revision of a document.
public struct DocumentRejection: Sendable, Equatable {
    public var id: String
    public var revision: Int
    public var reason: String

    public init(id: String, revision: Int, reason: String) {
        self.id = id
        self.revision = revision
        self.reason = reason
    }
}

/// The contract between the durable document store and the sync engine, beside
/// `SyncOutbox` for records and with the same rule: a document is pending until the backend
/// answered for it, so a crash between sending and marking means it is sent again.
public protocol DocumentOutbox: Sendable {
    /// The oldest pending documents of `kind`, at most `limit`.
    func pendingDocuments(kind: DocumentKind, limit: Int) async throws -> [OutboxDocument]
    /// The backend holds these revisions. A document stored again since then (a higher
    /// revision) stays pending.
    func markDocumentsDelivered(kind: DocumentKind, _ revisions: [DocumentRevision]) async throws
    /// The backend refused these revisions for good: keep them with the reason, stop
    /// sending them (a newer revision stored meanwhile stays pending).
    func quarantineDocuments(kind: DocumentKind, _ rejections: [DocumentRejection]) async throws
    /// Pending records plus pending documents: what the gateway still has to send, for the
    /// `Blegate-Outbox-Depth` header.
    func outboxDepth() async throws -> Int
}
