// SPDX-License-Identifier: MIT
import Prometheus
import Synchronization

/// Counters whose totals the process already keeps for `blegate status` (notifications per
/// device, recoveries per adapter, records delivered): each scrape advances the Prometheus
/// counter to the total it reads, so `status` and `/metrics` count the same events once.
/// A total that went down (its owner started again) is taken as a fresh start.
public final class CounterTotals: Sendable {
    private struct Key: Hashable {
        var name: String
        var labels: [String]
    }

    private struct Entry {
        var counter: Counter
        var last: Int64
    }

    private let registry: PrometheusCollectorRegistry
    private let entries = Mutex<[Key: Entry]>([:])

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Advances `name{labels}` to `total` (creating it at 0 the first time).
    public func advance(_ name: String, labels: [(String, String)] = [], help: String, to total: Int) {
        let key = Key(name: name, labels: labels.flatMap { [$0.0, $0.1] })
        let total = Int64(total)
        entries.withLock { entries in
            var entry = entries[key] ?? Entry(
                counter: labels.isEmpty ? registry.makeCounter(descriptor: .named(name, help: help))
                    : registry.makeCounter(descriptor: .named(name, help: help), labels: labels),
                last: 0)
            if total >= entry.last {
                entry.counter.increment(by: total - entry.last)
            } else {
                entry.counter.increment(by: total)
            }
            entry.last = total
            entries[key] = entry
        }
    }
}
