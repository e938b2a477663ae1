// SPDX-License-Identifier: MIT
import Cache
import StrapLinks
import WearMetrics

/// The record sink of `blegate run`: every record goes to the cache's group committer
/// (`append` only queues it, so the notification thread never waits for SQLite), and
/// its device's facts to the registry feeder; a scale's reading also becomes the member's
/// profile metrics (`ProfileMetricFeeder`).
public final class CacheRecordSink: RecordSink {
    public typealias AppendObserver = @Sendable (_ record: WearMetrics, _ kind: RecordKind, _ sequence: Int64) -> Void

    let cache: RecordCache
    let facts: DeviceFacts
    let observer: AppendObserver?
    /// Scale readings of paired members → profile metrics in the document outbox.
    public let profileMetrics: ProfileMetricFeeder

    /// `observer` sees every append with its outbox sequence (benchmarks match these to
    /// commit events); keep it short, it runs on the notification thread.
    public init(cache: RecordCache, facts: DeviceFacts, observer: AppendObserver? = nil) {
        self.cache = cache
        self.facts = facts
        self.observer = observer
        self.profileMetrics = ProfileMetricFeeder(cache: cache)
    }

    public func receive(_ record: WearMetrics, kind: RecordKind) {
        appended(record, kind: kind, sequence: cache.append(record))
    }

    /// One append for the round: the writer's lock is taken, and its thread woken, once.
    public func receive(_ batch: [SinkRecord]) {
        guard !batch.isEmpty else { return }
        // One append gives the round contiguous sequences ending at `last`.
        let last = cache.append(batch.map(\.record))
        var sequence = last - Int64(batch.count)
        for r in batch {
            sequence += 1
            appended(r.record, kind: r.kind, sequence: sequence)
        }
    }

    private func appended(_ record: WearMetrics, kind: RecordKind, sequence: Int64) {
        observer?(record, kind, sequence)
        profileMetrics.appended(record, sequence: sequence)
        if kind == .device { facts.absorb(record) }
    }
}
