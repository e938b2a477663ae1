// SPDX-License-Identifier: MIT
import Outbox

/// A `SyncOutbox` in memory, for tests and benchmarks of the sync engine without the
/// SQLite cache. It follows the contract exactly: oldest pending first, a record stays
/// pending until marked delivered or quarantined.
public actor InMemoryOutbox: SyncOutbox {
    private enum Disposition: Equatable {
        case pending
        case delivered
        case quarantined
    }

    public struct StorageFailure: Error, CustomStringConvertible {
        public var description: String { "injected storage failure" }
    }

    private var records: [OutboxRecord] = []
    private var dispositions: [Disposition] = []
    private var index: [String: Int] = [:]
    /// Everything before this index is settled.
    private var cursor = 0
    public private(set) var quarantined: [OutboxRejection] = []
    /// How often each id was marked delivered (more than once would be a sync bug).
    public private(set) var deliveryMarks: [String: Int] = [:]
    private var failuresToInject = 0

    public init(_ records: [OutboxRecord] = []) {
        self.records = records
        self.dispositions = Array(repeating: .pending, count: records.count)
        for (i, r) in records.enumerated() { index[r.id] = i }
    }

    /// Adds records (sequence must keep growing, as the cache's does).
    public func append(_ new: [OutboxRecord]) {
        for r in new { insert(r) }
    }

    private func insert(_ r: OutboxRecord) {
        index[r.id] = records.count
        records.append(r)
        dispositions.append(.pending)
    }

    /// The next `count` calls of any outbox method throw, like a failing disk.
    public func failNext(_ count: Int) {
        failuresToInject = count
    }

    private func injectedFailure() throws {
        if failuresToInject > 0 {
            failuresToInject -= 1
            throw StorageFailure()
        }
    }

    public var pendingCount: Int { dispositions[cursor...].lazy.filter { $0 == .pending }.count }
    public var deliveredCount: Int { dispositions.lazy.filter { $0 == .delivered }.count }

    public func pendingBatch(limit: Int) async throws -> [OutboxRecord] {
        try injectedFailure()
        while cursor < dispositions.count, dispositions[cursor] != .pending { cursor += 1 }
        var batch: [OutboxRecord] = []
        batch.reserveCapacity(min(limit, records.count - cursor))
        var i = cursor
        while i < records.count, batch.count < limit {
            if dispositions[i] == .pending { batch.append(records[i]) }
            i += 1
        }
        return batch
    }

    public func markDelivered(_ ids: [String]) async throws {
        try injectedFailure()
        for id in ids {
            guard let i = index[id] else { continue }
            dispositions[i] = .delivered
            deliveryMarks[id, default: 0] += 1
        }
    }

    public func quarantine(_ rejections: [OutboxRejection]) async throws {
        try injectedFailure()
        for r in rejections {
            guard let i = index[r.id] else { continue }
            dispositions[i] = .quarantined
            quarantined.append(r)
        }
    }
}
