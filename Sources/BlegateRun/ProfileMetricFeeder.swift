// SPDX-License-Identifier: MIT
import Cache
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Outbox
import Sync
import WearMetrics

/// Turns the scale records of paired members into profile-metric documents in the cache's
/// document outbox, once each record is committed (its id, which the profile metrics'
/// ids derive from, is minted at commit).
///
/// Scales are few and weigh someone now and then, so each reading gets a task of its own
/// instead of a queue; the notification thread only compares the record's source.
///
/// The record and its documents are two writes: a gateway that dies between them has the
/// reading without its profile metrics. `recover()`, run when the gateway starts, derives
/// the documents of the recent scale records again; the ids are the same, so documents
/// already stored are left as they are and only the missing ones are added.
public final class ProfileMetricFeeder: Sendable {
    let cache: RecordCache
    let logger: Logger
    /// Test hook (`BLEGATE_TEST_LOSE_PROFILE_METRICS`): store no document, as if the
    /// gateway always died between a scale record's commit and its documents.
    let losesDocuments: Bool

    /// How far before the newest record `recover()` looks, in milliseconds: far beyond the
    /// gap between a record's commit and its documents (a group commit and one write).
    public static let recoveryWindow: Int64 = 10 * 60 * 1000

    public init(cache: RecordCache, logger: Logger = Logger(label: "blegate.profile-metrics")) {
        self.cache = cache
        self.logger = logger
        self.losesDocuments = getenv("BLEGATE_TEST_LOSE_PROFILE_METRICS") != nil
    }

    /// Called for every appended record with its outbox sequence.
    public func appended(_ record: WearMetrics, sequence: Int64) {
        guard ProfileMetricMapping.mayCarryProfileMetric(record), !losesDocuments else { return }
        Task { await self.store(sequence: sequence) }
    }

    /// Stores again the documents of the members' scale records of the last
    /// `window` milliseconds before the newest record. Returns how many documents it
    /// handed to the cache (those already stored unchanged are no-ops there).
    @discardableResult
    public func recover(window: Int64 = ProfileMetricFeeder.recoveryWindow) async -> Int {
        do {
            let records = try await cache.memberRecords(withinLast: window, sources: ["ble_wss", "ble_bcs"])
            var count = 0
            for stored in records where ProfileMetricMapping.mayCarryProfileMetric(stored.record) {
                for d in ProfileMetricMapping.documents(recordID: stored.id, clientID: stored.clientID, record: stored.record) {
                    try await cache.putDocument(kind: .profileMetric, id: d.id, json: d.json)
                    count += 1
                }
            }
            return count
        } catch {
            logger.error("cannot recover the profile metrics of recent scale readings", metadata: ["error": "\(error)"])
            return 0
        }
    }

    /// Makes the documents of the record at `sequence` (after its commit). Returns how many
    /// were stored; a failure is logged (the record itself stays in the cache).
    @discardableResult
    public func store(sequence: Int64) async -> Int {
        do {
            try await cache.waitUntilCommitted(sequence)
            guard let stored = try await cache.storedRecords(after: sequence - 1, limit: 1).first, stored.sequence == sequence else {
                return 0
            }
            let documents = ProfileMetricMapping.documents(recordID: stored.id, clientID: stored.clientID, record: stored.record)
            for d in documents {
                try await cache.putDocument(kind: .profileMetric, id: d.id, json: d.json)
            }
            return documents.count
        } catch {
            logger.error("cannot store the profile metrics of a scale reading", metadata: ["sequence": "\(sequence)", "error": "\(error)"])
            return 0
        }
    }
}
