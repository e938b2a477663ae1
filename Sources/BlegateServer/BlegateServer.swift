// SPDX-License-Identifier: MIT
import HTTPListening
import Hummingbird
import Logging
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
/// await server.stop()
/// ```
public final class BlegateServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port; `start()` returns the bound one.
        public var port: Int
        public var database: DatabaseURL
        /// The gym's zone: the staff page shows class and workout times in it.
        public var timeZone: TimeZoneFile

        public init(host: String = "127.0.0.1", port: Int = 8080, database: DatabaseURL, timeZone: TimeZoneFile = .system()) {
            self.host = host
            self.port = port
            self.database = database
            self.timeZone = timeZone
        }
    }

    public let configuration: Configuration
    public let client: PostgresClient
    public let store: ServerStore
    private let logger: Logger
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>)?>(nil)

    public init(_ configuration: Configuration, logger: Logger = Logger(label: "blegate-server")) {
        self.configuration = configuration
        self.logger = logger
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .error)
        self.client = PostgresClient(configuration: configuration.database.clientConfiguration, backgroundLogger: quiet)
        self.store = ServerStore(client: client, logger: quiet)
    }

    /// Serves until SIGTERM or SIGINT (the executable).
    public func run() async throws {
        let group = makeGroup(signals: [.sigterm, .sigint], started: nil)
        try await group.run()
    }

    /// Migrates, starts listening in the background and returns the bound port.
    @discardableResult
    public func start() async throws -> Int {
        let started = BoundPort()
        let group = makeGroup(signals: [], started: started)
        let task = Task { try await group.run() }
        running.withLock { $0 = (group, task) }
        do {
            return try await started.wait()
        } catch {
            await stop()
            throw error
        }
    }

    /// Stops listening and closes the database connections.
    public func stop() async {
        guard let (group, task) = running.withLock({ r -> (ServiceGroup, Task<Void, any Error>)? in
            defer { r = nil }
            return r
        }) else { return }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    private func makeGroup(signals: [UnixSignal], started: BoundPort?) -> ServiceGroup {
        let http = HTTPService(server: self, started: started)
        return ServiceGroup(configuration: .init(
            services: [.init(service: client), .init(service: http, successTerminationBehavior: .gracefullyShutdownGroup,
                                                     failureTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: signals, logger: logger))
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
                responder: ServerResponder(store: server.store, logger: server.logger, time: LocalTime(zone: c.timeZone)),
                host: c.host, port: c.port, serverName: "blegate-server", bound: started ?? BoundPort(), logger: server.logger,
                onListening: { [logger = server.logger] port in
                    logger.info("blegate-server listening on \(c.host):\(port), database \(c.database)")
                }
            ).run()
        }
    }
}
