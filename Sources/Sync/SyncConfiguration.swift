// SPDX-License-Identifier: MIT

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
    public var backoff: BackoffPolicy
    /// On graceful shutdown, how long to keep delivering what is pending before returning.
    /// What is left stays in the cache for the next start.
    public var drainTimeout: Duration

    public init(gatewayID: String, sink: SyncSink = .wearmetrics, batchSize: Int = 500, interval: Duration = .seconds(5),
                backoff: BackoffPolicy = BackoffPolicy(), drainTimeout: Duration = .seconds(10)) {
        self.gatewayID = gatewayID
        self.sink = sink
        self.batchSize = min(max(batchSize, 1), 10_000)
        self.interval = interval
        self.backoff = backoff
        self.drainTimeout = drainTimeout
    }
}
