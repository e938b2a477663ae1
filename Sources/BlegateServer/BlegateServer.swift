// SPDX-License-Identifier: MIT
import HTTPListening
import Hummingbird
import Logging
import MetricsExposition
import PostgresNIO
import ServiceLifecycle
import Synchronization
import TimeZoneFiles
import UnixSignals

/// blegate-server: the backend contract on PostgreSQL. It keeps nothing in memory between
/// requests, so several instances behind a load balancer can share one database.
///
/// ```swift
/// let server = BlegateServer(.init(database: try DatabaseURL("postgres://blegate@/blegate?host=/run/postgresql")))
/// let port = try await server.start()     // migrates, then listens
/// let metrics = server.metricsPort        // `/metrics`, when `configuration.metrics` is set
/// await server.stop()
/// ```
public final class BlegateServer: Sendable {
    /// The server's version, as `blegate_server_build_info` carries it.
    public static let version = "1.0.0"

    /// A host and port to listen on, written `HOST:PORT` (`[::1]:9465` for IPv6).
    public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        /// 0 picks a free port.
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `HOST:PORT`; nil when it is not one.
        public init?(_ text: String) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                  (0...65535).contains(port) else { return nil }
            var host = text[..<colon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else { return nil }
            self.init(host: String(host), port: port)
        }

        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port; `start()` returns the bound one.
        public var port: Int
        public var database: DatabaseURL
        /// A streaming standby of `database` for people's reads (the staff page, member
        /// reads, the CSV); nil reads the primary.
        public var readDatabase: DatabaseURL?
        /// The gym's zone: the staff page shows class and workout times in it.
        public var timeZone: TimeZoneFile
        /// Where `GET /metrics` is served (a listener of its own); nil serves none. Port 0
        /// picks a free one: `metricsPort` tells it after `start()`.
        public var metrics: ListenAddress?

        public init(host: String = "127.0.0.1", port: Int = 8080, database: DatabaseURL, timeZone: TimeZoneFile = .system(),
                    metrics: ListenAddress? = nil, readDatabase: DatabaseURL? = nil) {
            self.host = host
            self.port = port
            self.database = database
            self.readDatabase = readDatabase
            self.timeZone = timeZone
            self.metrics = metrics
        }
    }

    public let configuration: Configuration
    public let client: PostgresClient
    /// The read replica's pool, when `readDatabase` is set.
    public let readClient: PostgresClient?
    public let store: ServerStore
    /// This instance's counts and measurements: `/metrics` and the staff page read them.
    public let metrics: ServerMetrics
    private let logger: Logger
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>, metricsPort: Int?)?>(nil)

    public init(_ configuration: Configuration, logger: Logger = Logger(label: "blegate-server")) {
        self.configuration = configuration
        self.logger = logger
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .error)
        self.client = PostgresClient(configuration: configuration.database.clientConfiguration, backgroundLogger: quiet)
        self.readClient = configuration.readDatabase.map { PostgresClient(configuration: $0.clientConfiguration, backgroundLogger: quiet) }
        self.metrics = ServerMetrics()
        self.store = ServerStore(client: client, readClient: readClient, logger: quiet, metrics: metrics)
    }

    /// Serves until SIGTERM or SIGINT (the executable).
    public func run() async throws {
        let group = makeGroup(signals: [.sigterm, .sigint], started: nil, metricsBound: nil)
        try await group.run()
    }

    /// Migrates, starts listening in the background and returns the bound port; once it
    /// returns, `metricsPort` is the bound metrics port (when `configuration.metrics` is set).
    @discardableResult
    public func start() async throws -> Int {
        let started = BoundPort()
        let metricsBound = configuration.metrics.map { _ in BoundPort() }
        let group = makeGroup(signals: [], started: started, metricsBound: metricsBound)
        let task = Task { try await group.run() }
        running.withLock { $0 = (group, task, nil) }
        do {
            let port = try await started.wait()
            let metricsPort = try await metricsBound?.wait()
            running.withLock { $0?.metricsPort = metricsPort }
            return port
        } catch {
            await stop()
            throw error
        }
    }

    /// The port `/metrics` is served on, after `start()` returned; nil when the server was
    /// configured without metrics or is not started.
    public var metricsPort: Int? {
        running.withLock { $0?.metricsPort }
    }

    /// Stops listening and closes the database connections.
    public func stop() async {
        guard let (group, task) = running.withLock({ r -> (ServiceGroup, Task<Void, any Error>)? in
            defer { r = nil }
            return r.map { ($0.group, $0.task) }
        }) else { return }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// The pool, the API listener, the metrics listener (when configured) and the database
    /// probe; any of them ending stops the others.
    private func makeGroup(signals: [UnixSignal], started: BoundPort?, metricsBound: BoundPort?) -> ServiceGroup {
        let http = HTTPService(server: self, started: started)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: client),
            .init(service: http, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let readClient { services.append(.init(service: readClient)) }
        if let address = configuration.metrics {
            let listener = MetricsListener(
                registry: metrics.registry, host: address.host, port: address.port, bound: metricsBound ?? BoundPort(), logger: logger,
                refresh: { [store, metrics] in
                    // One query a scrape; a database that does not answer leaves the gateways' gauges as they were.
                    let gateways = try? await ServerResponder.within(.seconds(2)) { try await store.gateways() }
                    metrics.refresh(gateways: gateways)
                })
            services.append(.init(service: MetricsService(listener: listener, address: address),
                                  successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .error)
        services.append(.init(service: DatabaseProbe(client: client, metrics: metrics, logger: quiet),
                              successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup))
        return ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: signals, logger: logger))
    }

    /// The metrics listener, its failure (a port already taken) naming it.
    private struct MetricsService: Service {
        struct Failed: Error, CustomStringConvertible {
            var description: String
        }

        let listener: MetricsListener
        let address: ListenAddress

        func run() async throws {
            do {
                try await listener.run()
            } catch {
                throw Failed(description: "metrics listener on \(address): \(error)")
            }
        }
    }

    /// Applies migrations, then serves HTTP.
    private struct HTTPService: Service {
        let server: BlegateServer
        let started: BoundPort?

        func run() async throws {
            do {
                let applied = try await server.store.migrate()
                if !applied.isEmpty { server.logger.info("schema migrations applied: \(applied)") }
            } catch {
                started?.resolve(.failure(error))
                throw error
            }
            let c = server.configuration
            try await ListeningService(
                responder: ServerResponder(store: server.store, logger: server.logger, time: LocalTime(zone: c.timeZone),
                                           metrics: server.metrics),
                host: c.host, port: c.port, serverName: "blegate-server", bound: started ?? BoundPort(), logger: server.logger,
                onListening: { [logger = server.logger] port in
                    let reads = c.readDatabase.map { ", reads from \($0)" } ?? ""
                    logger.info("blegate-server listening on \(c.host):\(port), database \(c.database)\(reads)")
                }
            ).run()
        }
    }
}
