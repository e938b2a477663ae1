// SPDX-License-Identifier: MIT
import MetricsExposition
import Prometheus
import StrapLinks
import Sync
import Synchronization
import WearMetrics

/// The gateway's Prometheus metrics (docs/metrics.md). Everything but the commit latency
/// is read from the `StatusReport` at each scrape, so `/metrics` and `blegate status` show
/// the same figures; the latency histogram is filled as records commit (`CommitTally`).
final class GatewayMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// swift-metrics instruments made at the event sites (the commit latency) land here.
    let factory: PrometheusMetricsFactory
    private let counters: CounterTotals
    /// Gauges whose label sets come and go (straps, adapters), by name and labels.
    private let gauges = Mutex<[GaugeKey: Gauge]>([:])

    private struct GaugeKey: Hashable {
        var name: String
        var labels: [String]
    }

    /// Every state `blegate status` names for a followed strap: each has a series per
    /// adapter, 0 when no strap is in it, so a rule sees 0 rather than nothing.
    static let strapStates = LinkState.allCases.map(\.rawValue)

    static let commitLatencyBuckets: [Duration] = [
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(1500), .seconds(2), .seconds(5), .seconds(10),
    ]

    init(version: String, startedAt: UTCTimestamp) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["blegate_commit_latency_seconds"] = Self.commitLatencyBuckets
        self.factory = factory
        counters = CounterTotals(registry: registry)
        registry.makeGauge(descriptor: .named("blegate_build_info", help: "The gateway's version"), labels: [("version", version)])
            .set(to: 1)
        registry.makeGauge(descriptor: .named("blegate_build_version_number", help: "The version as major*10000+minor*100+patch"))
            .set(to: Double(Self.versionNumber(version)))
        registry.makeGauge(descriptor: .named("blegate_start_time_seconds", help: "When the gateway started, Unix time"))
            .set(to: startedAt.secondsSince1970)
    }

    /// 1.2.3 → 10203, so rules can compare versions; parts past the third are ignored.
    static func versionNumber(_ version: String) -> Int {
        let parts = version.split(separator: ".").prefix(3).map { Int($0.prefix { $0.isNumber }) ?? 0 }
        return parts.enumerated().reduce(0) { sum, p in sum + p.element * [10_000, 100, 1][p.offset] }
    }

    /// Sets every gauge and advances every counter to what `report` shows.
    func update(from report: StatusReport) {
        if let t = report.totals {
            for (kind, n) in [("heart_rate", t.heartRateNotifications), ("battery", t.batteryNotifications), ("advertisement", t.advertisements)] {
                counters.advance("blegate_notifications_received_total", labels: [("kind", kind)],
                                 help: "Notifications received, and advertisements that made a record", to: n)
            }
            for (reason, n) in [("undecodable", t.undecodable), ("oversized", t.oversized)] {
                counters.advance("blegate_malformed_payloads_total", labels: [("reason", reason)], help: "Payloads counted and skipped", to: n)
            }
            counters.advance("blegate_notifications_dropped_total", labels: [("reason", "too_fast")],
                             help: "Heart-rate notifications dropped for coming faster than a heart beats", to: t.tooFast)
            counters.advance("blegate_reconnects_total", help: "Links lost and made again", to: t.reconnects)
            for kind in RecordKind.allCases {
                counters.advance("blegate_records_committed_total", labels: [("kind", kind.rawValue)],
                                 help: "Records fsynced into the cache", to: t.recordsCommitted[kind.rawValue] ?? 0)
            }
        }
        updateStraps(report)
        updateAdapters(report)
        let o = report.outbox
        set("blegate_cache_size_bytes", "The cache file's size", Double(o.fileBytes))
        if let free = o.filesystemFreeBytes, let size = o.filesystemSizeBytes {
            set("blegate_cache_filesystem_free_bytes", "Free bytes on the cache's file system (to an unprivileged user)", Double(free))
            set("blegate_cache_filesystem_size_bytes", "Size of the cache's file system", Double(size))
        }
        set("blegate_outbox_pending_records", "Records not yet at the backend", Double(o.pending))
        set("blegate_outbox_oldest_pending_age_seconds", "Age of the oldest pending record; 0 when none", o.oldestPendingAgeSeconds ?? 0)
        for (kind, n) in [("workout", o.pendingWorkouts), ("profile_metric", o.pendingProfileMetrics)] {
            set("blegate_outbox_pending_documents", "Documents not yet at the backend", Double(n ?? 0), [("kind", kind)])
        }
        if let s = report.sync {
            let r = s.requests ?? SyncRequestCounts()
            for (result, n) in [("ok", r.ok), ("http_error", r.httpError), ("unreachable", r.unreachable), ("unauthorized", r.unauthorized)] {
                counters.advance("blegate_sync_requests_total", labels: [("result", result)], help: "Requests to the backend", to: n)
            }
            counters.advance("blegate_sync_records_total", labels: [("outcome", "delivered")], help: "Records settled with the backend",
                             to: s.deliveredSinceStart)
            counters.advance("blegate_sync_records_total", labels: [("outcome", "quarantined")], help: "Records settled with the backend",
                             to: s.quarantinedSinceStart)
            set("blegate_sync_last_success_timestamp_seconds", "When the backend last took a request, Unix time; 0 before the first",
                s.lastSuccessAt.flatMap { UTCTimestamp(iso8601: $0) }?.secondsSince1970 ?? 0)
        }
        set("blegate_class_running", "1 while a class runs", report.currentClass == nil ? 0 : 1)
    }

    private func updateStraps(_ report: StatusReport) {
        var counts: [[String]: Int] = [:]
        let adapters = Set((report.adapters ?? []).map(\.adapter) + report.devices.compactMap(\.adapter))
        for adapter in adapters.union(["none"]) {
            for state in Self.strapStates { counts[[state, adapter]] = 0 }
        }
        var batteries: [[String]: Double] = [:]
        var lastSeen: [[String]: Double] = [:]
        for d in report.devices where d.state != "denied" {
            counts[[d.state, d.adapter ?? "none"], default: 0] += 1
            if let b = d.battery { batteries[[d.address]] = Double(b) / 100 }
            if let seen = d.lastSeen.flatMap({ UTCTimestamp(iso8601: $0) }) { lastSeen[[d.address]] = seen.secondsSince1970 }
        }
        replace("blegate_straps", "Followed straps by state and adapter", labels: ["state", "adapter"], counts.mapValues(Double.init))
        replace("blegate_strap_battery_ratio", "Battery of each followed strap, 0 to 1", labels: ["address"], batteries)
        replace("blegate_strap_last_seen_timestamp_seconds", "When each followed strap was last heard, Unix time",
                labels: ["address"], lastSeen)
    }

    private func updateAdapters(_ report: StatusReport) {
        let adapters = report.adapters ?? []
        replace("blegate_adapter_links", "Links up now", labels: ["adapter"],
                Dictionary(adapters.map { ([$0.adapter], Double($0.links)) }, uniquingKeysWith: { a, _ in a }))
        replace("blegate_adapter_link_limit", "Links allowed now: the learned limit, else max_links", labels: ["adapter"],
                Dictionary(adapters.map { ([$0.adapter], Double($0.limit)) }, uniquingKeysWith: { a, _ in a }))
        replace("blegate_adapter_learned_link_limit", "What refusals taught of the adapter's link limit", labels: ["adapter"],
                Dictionary(adapters.compactMap { a in a.learnedLimit.map { ([a.adapter], Double($0)) } }, uniquingKeysWith: { a, _ in a }))
        for (adapter, n) in report.adapterRecoveries ?? [:] {
            counters.advance("blegate_adapter_resets_total", labels: [("adapter", adapter)], help: "HCI recoveries", to: n)
        }
    }

    private func set(_ name: String, _ help: String, _ value: Double, _ labels: [(String, String)] = []) {
        gauge(name, help, labels).set(to: value)
    }

    private func gauge(_ name: String, _ help: String, _ labels: [(String, String)]) -> Gauge {
        let key = GaugeKey(name: name, labels: labels.flatMap { [$0.0, $0.1] })
        return gauges.withLock { g in
            if let existing = g[key] { return existing }
            let made = labels.isEmpty ? registry.makeGauge(descriptor: .named(name, help: help))
                : registry.makeGauge(descriptor: .named(name, help: help), labels: labels)
            g[key] = made
            return made
        }
    }

    /// Sets the series of `name` to `values` (by label values, in the order of `labels`)
    /// and removes the series no longer there: a strap or adapter gone leaves no stale value.
    private func replace(_ name: String, _ help: String, labels: [String], _ values: [[String]: Double]) {
        for (labelValues, value) in values {
            set(name, help, value, Array(zip(labels, labelValues)))
        }
        let wanted = Set(values.keys.map { v in zip(labels, v).flatMap { [$0.0, $0.1] } })
        let stale = gauges.withLock { g -> [Gauge] in
            let gone = g.keys.filter { $0.name == name && !wanted.contains($0.labels) }
            return gone.compactMap { g.removeValue(forKey: $0) }
        }
        for gauge in stale { registry.unregisterGauge(gauge) }
    }
}
