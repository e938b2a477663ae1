// SPDX-License-Identifier: MIT
import Timing

/// Which backend endpoint records go to (`backend.sink`).
public enum SyncSink: String, Sendable, Equatable {
    /// `POST /api/v1/metrics` with whole WearMetrics records.
    case wearmetrics
    /// `POST {samples_path}` with Flō-style samples (see `SampleMapping`).
    case samples
}

/// The sync engine's settings, from `[gateway]` and `[backend]` in blegate.toml.
public struct SyncConfiguration: Sendable, Equatable {
    /// `gateway.id`, sent with every batch.
    public var gatewayID: String
    public var sink: SyncSink
    /// `backend.batch_size`: records per request, clamped to 1…10000 (the config layer
    /// refuses values outside that range with an error before they get here).
    public var batchSize: Int
    /// `backend.interval`: how often to look for pending records without a `wake()`, and
    /// how often an unauthorized engine checks the token file.
    public var interval: Duration
    /// The wait after consecutive failures: a uniformly random time within the window
    /// (full jitter), so a gym's worth of gateways that all lost the backend at once do not
    /// come back in lockstep and knock it over again.
    public var backoff: Backoff
    /// A `Retry-After` longer than this is shortened to it, so a misconfigured backend
    /// cannot park the gateway for days.
    public var maximumRetryAfter: Duration
    /// On graceful shutdown, how long to keep delivering what is pending before returning.
    /// What is left stays in the cache for the next start.
    public var drainTimeout: Duration

    public init(gatewayID: String, sink: SyncSink = .wearmetrics, batchSize: Int = 500, interval: Duration = .seconds(5),
                backoff: Backoff = Backoff(base: .seconds(1), cap: .seconds(60)), maximumRetryAfter: Duration = .seconds(3600),
                drainTimeout: Duration = .seconds(10)) {
        self.gatewayID = gatewayID
        self.sink = sink
        self.batchSize = min(max(batchSize, 1), 10_000)
        self.interval = interval
        self.backoff = backoff
        self.maximumRetryAfter = maximumRetryAfter
        self.drainTimeout = drainTimeout
    }
}
