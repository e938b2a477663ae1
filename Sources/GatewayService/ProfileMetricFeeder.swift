// SPDX-License-Identifier: MIT
import Cache
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
public final class ProfileMetricFeeder: Sendable {
    let cache: RecordCache
    let logger: Logger

    public init(cache: RecordCache, logger: Logger = Logger(label: "blegate.profile-metrics")) {
        self.cache = cache
        self.logger = logger
    }

    /// Called for every appended record with its outbox sequence.
    public func appended(_ record: WearMetrics, sequence: Int64) {
        guard ProfileMetricMapping.mayCarryProfileMetric(record) else { return }
        Task { await self.store(sequence: sequence) }
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
