// SPDX-License-Identifier: MIT
import Hummingbird
import Logging
import ServiceLifecycle

/// An HTTP listener as a service of a `ServiceGroup`, telling `bound` its port once it
/// listens, or the error that kept it from listening: the one way the test backend and
/// blegate-server start their HTTP side, so a caller can wait for the real port (port 0
/// picks one) instead of polling it.
public struct ListeningService<Responder: HTTPResponder>: Service
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    public struct StoppedBeforeListening: Error, CustomStringConvertible {
        public var description: String { "the HTTP server stopped before it listened" }
    }

    let responder: Responder
    let host: String
    let port: Int
    let serverName: String?
    let bound: BoundPort
    let logger: Logger
    let onListening: @Sendable (Int) -> Void

    public init(responder: Responder, host: String, port: Int, serverName: String? = nil, bound: BoundPort, logger: Logger,
                onListening: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.responder = responder
        self.host = host
        self.port = port
        self.serverName = serverName
        self.bound = bound
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname(host, port: port), serverName: serverName, reuseAddress: true),
            onServerRunning: { [bound, onListening] channel in
                let port = channel.localAddress?.port ?? 0
                onListening(port)
                bound.resolve(.success(port))
            },
            logger: logger
        )
        do {
            try await app.run()
        } catch {
            bound.resolve(.failure(error))
            throw error
        }
        bound.resolve(.failure(StoppedBeforeListening()))
    }
}
