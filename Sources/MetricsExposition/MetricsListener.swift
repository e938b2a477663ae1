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

    public init(registry: PrometheusCollectorRegistry, host: String, port: Int, bound: BoundPort = BoundPort(), logger: Logger,
                refresh: @escaping @Sendable () async -> Void = {}) {
        self.registry = registry
        self.host = host
        self.port = port
        self.bound = bound
        self.logger = logger
        self.refresh = refresh
    }

    public func run() async throws {
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
