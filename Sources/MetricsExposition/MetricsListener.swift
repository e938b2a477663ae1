// SPDX-License-Identifier: MIT
import HTTPListening
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// `GET /metrics` in Prometheus's text format on a listener of its own, so the port a
/// gym opens to its Prometheus carries nothing else (no wall, no coach page, no API).
/// `refresh` runs before each scrape: gauges read from the same report `blegate status`
/// shows are set there, so the two never disagree.
public struct MetricsListener: Service {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    let registry: PrometheusCollectorRegistry
    let host: String
    let port: Int
    let bound: BoundPort
    let logger: Logger
    let refresh: @Sendable () async -> Void
    let retryEvery: Duration?
    let onFailure: @Sendable (String) -> Void

    /// `retryEvery`: when the port cannot be had (another process holds it), tell
    /// `onFailure` once and try again this often, so a busy metrics port never stops the
    /// gateway; nil: throw, and the service group stops (a server started with the flag).
    public init(registry: PrometheusCollectorRegistry, host: String, port: Int, bound: BoundPort = BoundPort(), logger: Logger,
                retryEvery: Duration? = nil, onFailure: @escaping @Sendable (String) -> Void = { _ in },
                refresh: @escaping @Sendable () async -> Void = {}) {
        self.registry = registry
        self.host = host
        self.port = port
        self.bound = bound
        self.logger = logger
        self.retryEvery = retryEvery
        self.onFailure = onFailure
        self.refresh = refresh
    }

    public func run() async throws {
        var failures = 0
        while true {
            do {
                try await listen()
                return
            } catch {
                guard let retryEvery, !Task.isShuttingDownGracefully, !Task.isCancelled else { throw error }
                failures += 1
                if failures == 1 {
                    let message = "metrics cannot listen on \(host):\(port): \(error); trying again every \(retryEvery)"
                    logger.error("\(message)")
                    onFailure(message)
                }
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: retryEvery) }
                } catch {
                    return
                }
            }
        }
    }

    private func listen() async throws {
        let router = Router()
        router.get("/metrics") { [registry, refresh] _, _ -> Response in
            await refresh()
            var body: [UInt8] = []
            body.reserveCapacity(registry.internalBufferCapacity())
            registry.emit(into: &body)
            return Response(status: .ok, headers: [.contentType: Self.contentType],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        try await ListeningService(
            responder: router.buildResponder(), host: host, port: port, serverName: nil, bound: bound, logger: logger,
            onListening: { [logger, host] port in logger.info("metrics on http://\(host):\(port)/metrics") }
        ).run()
    }
}
