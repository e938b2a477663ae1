// SPDX-License-Identifier: MIT
import Logging
import Synchronization

/// A loopback implementation of the blegate backend contract, with fault injection, for
/// tests and benchmarks (and the `blegate-test-backend` executable).
///
/// ```swift
/// let backend = try TestBackend(.init(token: "t0ken", pairingCodes: ["ABC123"]))
/// try await backend.start()              // port 0 → a free port
/// backend.faults.add(.status(503, retryAfter: "2", count: 1))
/// // … point the client at backend.baseURL …
/// await backend.stop()
/// ```
public final class TestBackend: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port; read it from `port` after `start()`.
        public var port: Int
        /// The bearer token requests must carry; nil accepts any request.
        public var token: String?
        /// Valid single-use pairing codes.
        public var pairingCodes: [String]
        /// Append accepted items to this file as JSON lines, and read it back on start.
        public var dataFile: String?
        public var samplesPath: String
        /// false answers `PUT /api/v1/workouts` with `refusedCorrectionStatus`, as a backend
        /// without corrections.
        public var acceptsWorkoutCorrections: Bool
        /// 405 (Method Not Allowed, `Allow: POST`) or 404 (a backend with no route for it).
        public var refusedCorrectionStatus: Int

        public init(host: String = "127.0.0.1", port: Int = 0, token: String? = nil, pairingCodes: [String] = [],
                    dataFile: String? = nil, samplesPath: String = "/api/v1/samples", acceptsWorkoutCorrections: Bool = true,
                    refusedCorrectionStatus: Int = 405) {
            self.acceptsWorkoutCorrections = acceptsWorkoutCorrections
            self.refusedCorrectionStatus = refusedCorrectionStatus
            self.host = host
            self.port = port
            self.token = token
            self.pairingCodes = pairingCodes
            self.dataFile = dataFile
            self.samplesPath = samplesPath
        }
    }

    public let configuration: Configuration
    public let store: BackendStore
    public let faults: FaultInjector
    private let listener: Listener
    private let boundPort: Mutex<Int>
    private let outages = Mutex<Task<Void, Never>?>(nil)

    public init(_ configuration: Configuration = Configuration(), logger: Logger? = nil) throws {
        self.configuration = configuration
        let store = try BackendStore(token: configuration.token, codes: configuration.pairingCodes, dataFile: configuration.dataFile)
        let faults = FaultInjector()
        self.store = store
        self.faults = faults
        self.boundPort = Mutex(configuration.port)
        var quiet = logger ?? Logger(label: "blegate-test-backend")
        if logger == nil { quiet.logLevel = .error }
        // The responder needs a way to start an outage on its own listener; it is wired
        // through a box because the listener is created after the responder.
        let box = OutageBox()
        let connections = OpenConnections()
        let responder = BackendResponder(store: store, faults: faults, samplesPath: configuration.samplesPath,
                                         started: .now, outage: { box.trigger($0) }, connections: connections,
                                         acceptsWorkoutCorrections: configuration.acceptsWorkoutCorrections,
                                         refusedCorrectionStatus: configuration.refusedCorrectionStatus)
        self.listener = Listener(host: configuration.host, port: configuration.port, responder: responder,
                                 connections: connections, logger: quiet)
        box.backend.withLock { $0 = WeakBackend(self) }
    }

    /// The bound port (after `start()`).
    public var port: Int { boundPort.withLock { $0 } }
    public var baseURL: String { "http://\(configuration.host):\(port)" }

    /// Binds and starts answering. Throws if the port cannot be bound.
    public func start() async throws {
        let port = try await listener.open()
        boundPort.withLock { $0 = port }
    }

    /// Closes the listener and every connection.
    public func stop() async {
        outages.withLock { $0?.cancel(); $0 = nil }
        await listener.close()
    }

    /// Closes the listener: connections are refused until `endOutage()`.
    public func beginOutage() async {
        await listener.close(grace: .seconds(2))
    }

    /// Reopens the listener on the same port.
    public func endOutage() async throws {
        try await listener.open()
    }

    /// An outage of `duration`, ended by a background task; returns once the listener is closed.
    public func outage(for duration: Duration) async {
        await beginOutage()
        let task = Task.detached { [self] in
            try? await Task.sleep(for: duration)
            guard !Task.isCancelled else { return }
            // Reopening can fail while the old listener's socket is still being torn
            // down on a loaded machine: retry for a while, and say so if it never opens.
            for attempt in 1...150 {
                do {
                    try await self.endOutage()
                    return
                } catch {
                    if attempt == 150 { print("TestBackend: could not reopen the listener after the outage: \(error)") }
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
        }
        outages.withLock { $0 = task }
    }

    public var isListening: Bool { get async { await listener.isOpen } }

    /// Waits until `condition` holds over what the store holds; false on timeout.
    public func wait(timeout: Duration, until condition: (BackendStore) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(store) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(store)
    }

    /// Waits until the backend holds at least `count` records; false on timeout.
    public func waitForRecords(_ count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if store.records.count >= count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return store.records.count >= count
    }
}

private struct WeakBackend: @unchecked Sendable {
    weak var backend: TestBackend?
    init(_ backend: TestBackend) { self.backend = backend }
}

/// Lets an admin request start an outage of the listener that is serving it.
private final class OutageBox: Sendable {
    let backend = Mutex<WeakBackend?>(nil)

    func trigger(_ duration: Duration) {
        guard let backend = backend.withLock({ $0?.backend }) else { return }
        Task.detached {
            // Let the admin response go out before the listener closes.
            try? await Task.sleep(for: .milliseconds(50))
            await backend.outage(for: duration)
        }
    }
}
