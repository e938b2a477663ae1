// SPDX-License-Identifier: MIT
import WearMetrics

/// One record waiting to leave the gateway. The cache hands these to the sync engine; the
/// `id` is minted once, when the record is first stored, so a replay after a crash sends
/// the same id and the backend can discard the duplicate.
///
/// The record travels as its typed value, read back from the cache's columns; the sync
/// engine writes its WearMetrics JSON as it builds a batch (`WearMetrics.appendJSON`), and
/// the samples sink reads its fields directly.
public struct OutboxRecord: Sendable, Equatable {
    /// Stable UUID (lowercase, 8-4-4-4-12), the backend's idempotency key.
    public var id: String
    /// Member who wore the strap when the record was taken; nil while unpaired.
    public var clientID: String?
    /// Cache-wide insertion sequence. Batches are taken in this order, which keeps each
    /// device's records in the order they were measured.
    public var sequence: Int64
    /// The WearMetrics v1.0 record, without the `id` and `client_id` the batch adds in front.
    public var record: WearMetrics

    public init(id: String, clientID: String?, sequence: Int64, record: WearMetrics) {
        self.id = id
        self.clientID = clientID
        self.sequence = sequence
        self.record = record
    }
}

/// Why the backend refused one record; quarantined records are kept, not retried.
public struct OutboxRejection: Sendable, Equatable {
    public var id: String
    public var reason: String

    public init(id: String, reason: String) {
        self.id = id
        self.reason = reason
    }
}

/// The contract between the durable cache (SQLite) and the sync engine (HTTP).
///
/// The sync engine never deletes anything itself: it asks for the oldest pending records,
/// and reports which ones the backend now holds (inserted or duplicate) and which it
/// refused. A record is pending until one of those two calls names it, so a crash between
/// sending and marking means the batch is sent again, which the backend de-duplicates by id.
public protocol SyncOutbox: Sendable {
    /// The oldest pending records in `sequence` order, at most `limit`. Records held back
    /// by policy (an unpaired device when the config says to hold them) are skipped.
    func pendingBatch(limit: Int) async throws -> [OutboxRecord]
    /// The backend holds these (inserted now or earlier): they are no longer pending.
    func markDelivered(_ ids: [String]) async throws
    /// The backend refused these for good: keep them with the reason, stop sending them.
    func quarantine(_ rejections: [OutboxRejection]) async throws
}
