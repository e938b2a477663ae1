// SPDX-License-Identifier: MIT
import MetricsExposition
import Prometheus
import Synchronization

/// What one blegate-server instance counts and measures (docs/metrics.md, job
/// `blegate-server`), in one place: `/metrics` reads it (counters advance to its totals at
/// each scrape) and the staff page's Server panel shows it, so the two never disagree. One
/// per `BlegateServer`, with a registry of its own: several servers in one process keep
/// their figures apart, and the global MetricsSystem is never touched.
public final class ServerMetrics: Sendable {
    public enum Outcome: String, Sendable, CaseIterable {
        case stored, duplicate, rejected
    }

    /// The figures the staff page shows, as `/metrics` exports them.
    public struct Snapshot: Sendable, Equatable {
        /// Requests answered since the start, every route and status.
        public var requests: Int
        public var records: [Outcome: Int]
        public var workouts: [Outcome: Int]
        /// The last probe's verdict; nil before the first probe ended.
        public var databaseUp: Bool?
        /// The last probe's time in seconds.
        public var probeSeconds: Double?
        public var connectionsInUse: Int
    }

    /// Request durations: 5 ms to 10 s, one bucket at 250 ms.
    static let requestBuckets: [Duration] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000].map { .milliseconds($0) }
    /// Waits for a connection: mostly none, so from 1 ms.
    static let waitBuckets: [Duration] = [.milliseconds(1)] + requestBuckets

    enum Name {
        static let buildInfo = "blegate_server_build_info"
        static let requests = "blegate_server_http_requests_total"
        static let requestDuration = "blegate_server_http_request_duration_seconds"
        static let records = "blegate_server_records_total"
        static let workouts = "blegate_server_workouts_total"
        static let databaseUp = "blegate_server_database_up"
        static let probeDuration = "blegate_server_database_probe_duration_seconds"
        static let connectionsInUse = "blegate_server_database_connections_in_use"
        static let connectionWait = "blegate_server_database_connection_wait_seconds"
        static let lastContact = "blegate_server_gateway_last_contact_timestamp_seconds"
        static let outboxPending = "blegate_server_gateway_outbox_pending_records"
    }

    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var records: [Outcome: Int] = [:]
        var workouts: [Outcome: Int] = [:]
        var databaseUp: Bool?
        var probeSeconds: Double?
        var connectionsInUse = 0
    }

    public let registry = PrometheusCollectorRegistry()
    private let totals: CounterTotals
    private let state = Mutex(State())
    private let databaseUpGauge: Gauge
    private let probeGauge: Gauge
    private let connectionsGauge: Gauge
    private let connectionWait: DurationHistogram

    public init(version: String = BlegateServer.version) {
        totals = CounterTotals(registry: registry)
        registry.makeGauge(descriptor: .named(Name.buildInfo, help: "1, labelled with the server's version"),
                           labels: [("version", version)]).set(to: 1)
        databaseUpGauge = registry.makeGauge(descriptor: .named(
            Name.databaseUp, help: "1 when the last probe (SELECT 1, every 5 s, 2 s to answer) succeeded"))
        probeGauge = registry.makeGauge(descriptor: .named(Name.probeDuration, help: "The last database probe's time"))
        connectionsGauge = registry.makeGauge(descriptor: .named(Name.connectionsInUse, help: "Database connections lent to requests now"))
        connectionWait = registry.makeDurationHistogram(
            descriptor: .named(Name.connectionWait, help: "Waiting for a database connection"), buckets: Self.waitBuckets)
        advanceCounters()
    }

    // MARK: Events

    /// A request answered: `route` is its pattern (`ServerResponder.route(of:)`).
    func request(route: String, method: String, status: Int, duration: Duration) {
        state.withLock { $0.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1 }
        registry.makeDurationHistogram(
            descriptor: .named(Name.requestDuration, help: "Time to answer a request, by route"), labels: [("route", route)],
            buckets: Self.requestBuckets
        ).record(duration)
    }

    /// A batch of records (`workouts` false) or workouts, as its answer counted it.
    func batch(workouts: Bool, _ outcome: BatchOutcome) {
        state.withLock { s in
            func add(_ tally: inout [Outcome: Int]) {
                tally[.stored, default: 0] += outcome.inserted
                tally[.duplicate, default: 0] += outcome.duplicates
                tally[.rejected, default: 0] += outcome.rejected.count
            }
            if workouts { add(&s.workouts) } else { add(&s.records) }
        }
    }

    /// A database probe ended: answered (`up`) or failed or timed out, after `seconds`.
    func probe(up: Bool, seconds: Double) {
        state.withLock { s in
            s.databaseUp = up
            s.probeSeconds = seconds
        }
        databaseUpGauge.set(to: up ? 1 : 0)
        probeGauge.set(to: seconds)
    }

    func connectionLent(after wait: Duration) {
        connectionWait.record(wait)
        state.withLock { $0.connectionsInUse += 1 }
        connectionsGauge.increment()
    }

    func connectionReturned() {
        state.withLock { $0.connectionsInUse -= 1 }
        connectionsGauge.decrement()
    }

    // MARK: Reading

    public func snapshot() -> Snapshot {
        state.withLock { s in
            Snapshot(requests: s.requests.values.reduce(0, +), records: s.records, workouts: s.workouts,
                     databaseUp: s.databaseUp, probeSeconds: s.probeSeconds, connectionsInUse: s.connectionsInUse)
        }
    }

    /// Before a scrape: counters to the totals, and each gateway's last contact and outbox
    /// depth from `gateways` (the gateways table, as the staff page shows it); nil when the
    /// database did not answer, which leaves the gateways' gauges as they were.
    func refresh(gateways: [ServerStore.GatewayInfo]?) {
        advanceCounters()
        for g in gateways ?? [] {
            if let seconds = g.lastContactUnixSeconds {
                registry.makeGauge(descriptor: .named(Name.lastContact, help: "When the gateway last called, Unix time"),
                                   labels: [("gateway", g.id)]).set(to: seconds)
            }
            if let depth = g.outboxDepth {
                registry.makeGauge(descriptor: .named(Name.outboxPending, help: "The gateway's outbox as it last reported it"),
                                   labels: [("gateway", g.id)]).set(to: Double(depth))
            }
        }
    }

    private func advanceCounters() {
        let s = state.withLock { $0 }
        for (key, n) in s.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            totals.advance(Name.requests, labels: [("route", key.route), ("method", key.method), ("status", String(key.status))],
                           help: "Requests answered, by route, method and status", to: n)
        }
        for outcome in Outcome.allCases {
            totals.advance(Name.records, labels: [("outcome", outcome.rawValue)],
                           help: "Records of every batch: stored, duplicate or rejected", to: s.records[outcome] ?? 0)
            totals.advance(Name.workouts, labels: [("outcome", outcome.rawValue)],
                           help: "Workouts of every batch: stored, duplicate or rejected", to: s.workouts[outcome] ?? 0)
        }
    }
}
