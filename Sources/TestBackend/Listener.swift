// SPDX-License-Identifier: MIT
import HTTPListening
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The HTTP listener, which can be closed and reopened on the same port: an outage where
/// connecting is refused, as when a backend's host or load balancer is down, not merely
/// a server answering errors.
actor Listener {
    struct NotRunning: Error, CustomStringConvertible {
        var description: String { "the test backend's server stopped before it started listening" }
    }

    private let host: String
    private(set) var port: Int
    private let responder: BackendResponder
    private let connections: OpenConnections
    private let logger: Logger
    private var group: ServiceGroup?
    private var task: Task<Void, Never>?

    init(host: String, port: Int, responder: BackendResponder, connections: OpenConnections, logger: Logger) {
        self.host = host
        self.port = port
        self.responder = responder
        self.connections = connections
        self.logger = logger
    }

    var isOpen: Bool { task != nil }

    /// Starts listening; the first open with port 0 picks a free port, later opens reuse it.
    ///
    /// Port 0 is served from `QuietPorts` (below the ephemeral range) where it can be,
    /// so the port stays ours through an outage.
    @discardableResult
    func open() async throws -> Int {
        if task != nil { return port }
        if port == 0, let candidates = QuietPorts.candidates() {
            var lastError: (any Error)?
            for candidate in candidates {
                port = candidate
                do {
                    return try await start()
                } catch {
                    lastError = error
                }
            }
            port = 0
            logger.warning("no quiet port could be bound (\(String(describing: lastError))); using an ephemeral one")
        }
        return try await start()
    }

    private func start() async throws -> Int {
        let started = BoundPort()
        let http = ListeningService(responder: responder, host: host, port: port, bound: started, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [http], gracefulShutdownSignals: [], logger: logger))
        self.group = group
        // Detached: a task started from a request handler (an admin-triggered outage) would
        // otherwise inherit the old server's graceful-shutdown task-locals.
        self.task = Task.detached {
            do {
                try await group.run()
                started.resolve(.failure(NotRunning()))
            } catch {
                started.resolve(.failure(error))
            }
        }
        do {
            port = try await started.wait()
        } catch {
            task = nil
            self.group = nil
            throw error
        }
        return port
    }

    /// Stops accepting and closes every connection (after answering requests in flight,
    /// for at most `grace`), so clients see refused connections until `open()`.
    func close(grace: Duration = .seconds(5)) async {
        guard let task, let group else { return }
        self.task = nil
        self.group = nil
        await group.triggerGracefulShutdown()
        await connections.closeAll()
        await withTaskGroup(of: Void.self) { g in
            g.addTask { await task.value }
            g.addTask {
                try? await Task.sleep(for: grace)
                task.cancel()
            }
            await g.next()
            g.cancelAll()
        }
        await task.value
    }
}
