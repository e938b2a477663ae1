// SPDX-License-Identifier: MIT
import Cache
import CoreMetrics
import StrapLinks
import Synchronization
import Timing
import WearMetrics

/// Records committed by kind, and how long each took from its notification's arrival to
/// its commit (`blegate_commit_latency_seconds`). Appends are matched to commits by their
/// outbox sequence: each append leaves its sequence, kind and time here, and each commit
/// takes those at or below its last sequence.
///
/// Holds at most `capacity` appends (a few seconds of a full room; more only while commits
/// fail): beyond it the oldest are counted without a latency.
final class CommitTally: Sendable {
    static let capacity = 4096

    private struct Pending {
        var sequence: Int64
        var kind: RecordKind
        /// Monotonic nanoseconds the record arrived: its append minus how long before it
        /// the notification reached this machine (the reader's gathering window).
        var arrivedAt: UInt64
    }

    private struct State {
        var pending: [Pending] = []
        var start = 0
        var committed: [RecordKind: Int] = [:]
    }

    private let state = Mutex(State())
    private let latency: CoreMetrics.Timer?

    /// `metrics`: the factory the latency histogram is made in; nil counts without one.
    init(metrics: (any MetricsFactory)?) {
        latency = metrics.map { CoreMetrics.Timer(label: "blegate_commit_latency_seconds", factory: $0) }
    }

    /// On the notification thread, as the record is handed to the cache.
    func appended(_ record: WearMetrics, kind: RecordKind, sequence: Int64) {
        let now = MonotonicClock.nanoseconds()
        let lagMilliseconds = max(0, UTCTimestamp.now.millisecondsSince1970 - record.timestamp.millisecondsSince1970)
        // A record stamped far in the past is not a notification's (a scale's stored reading).
        let lag = lagMilliseconds < 60_000 ? UInt64(lagMilliseconds) * 1_000_000 : 0
        state.withLock { s in
            if s.pending.count - s.start >= Self.capacity {
                s.committed[s.pending[s.start].kind, default: 0] += 1
                s.start += 1
            }
            s.pending.append(Pending(sequence: sequence, kind: kind, arrivedAt: now > lag ? now - lag : now))
        }
    }

    /// On the cache writer's thread, after COMMIT returned.
    func committed(_ event: CommitEvent) {
        let done = state.withLock { s -> [UInt64] in
            var latencies: [UInt64] = []
            while s.start < s.pending.count, s.pending[s.start].sequence <= event.sequences.upperBound {
                let p = s.pending[s.start]
                s.committed[p.kind, default: 0] += 1
                latencies.append(event.committedAt > p.arrivedAt ? event.committedAt - p.arrivedAt : 0)
                s.start += 1
            }
            if s.start > 1024 || s.start == s.pending.count {
                s.pending.removeFirst(s.start)
                s.start = 0
            }
            return latencies
        }
        guard let latency else { return }
        for ns in done { latency.recordNanoseconds(Int64(clamping: ns)) }
    }

    /// Records committed since start, by kind.
    var committedByKind: [RecordKind: Int] { state.withLock { $0.committed } }
}
