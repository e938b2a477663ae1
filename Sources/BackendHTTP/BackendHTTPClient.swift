// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Timing

/// A small HTTP/1.1 client for a gateway's one backend: one keep-alive connection, reused
/// call after call and closed after `idleTimeout` unused; redirects are answers like any
/// other (never followed); a connection that cannot be made fails the call at once.
///
/// **Resend.** A server may close a kept-alive connection while it sits idle (its own
/// keep-alive timeout, a restart) and the client only learns so when it next writes. When a
/// *reused* connection fails before any byte of the answer has arrived, the request is sent
/// once more on a fresh connection. This can deliver a request twice when the server
/// processed it and then died before answering; callers send only requests whose repetition
/// is harmless (the blegate backend de-duplicates records by id).
public final class BackendHTTPClient: Sendable {
    public struct Request: Sendable {
        public var method: HTTPMethod
        public var url: String
        public var headers: HTTPHeaders
        public var body: ByteBuffer?

        public init(method: HTTPMethod = .POST, url: String, headers: HTTPHeaders = [:], body: ByteBuffer? = nil) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    /// One event loop thread for every client of the process that is not given a group: a
    /// gateway talks to one backend over one connection at a time, and NIO's default group
    /// has a thread per core, each with its stack, its malloc arena and 190 KB of task
    /// buffers (heaptrack), for nothing.
    public static let sharedEventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    public let connectTimeout: Duration
    public let idleTimeout: Duration
    /// The largest answer body read; a larger one ends the call with `.answerTooLarge`.
    public let answerLimit: Int
    public let trust: TLSTrust
    private let group: any EventLoopGroup
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var idle: HTTPConnection?
        /// Counts parkings, so an idle timer closes only the parking it was set for.
        var parked = 0
        var shutDown = false
        var tls: TLSConnectionSetup?
    }

    public init(eventLoopGroup: (any EventLoopGroup)? = nil, connectTimeout: Duration = .seconds(10),
                idleTimeout: Duration = .seconds(60), answerLimit: Int = 4 << 20, trust: TLSTrust = .system) {
        self.group = eventLoopGroup ?? Self.sharedEventLoopGroup
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.answerLimit = answerLimit
        self.trust = trust
    }

    /// Closes the idle connection; calls after this still work but keep no connection.
    public func shutdown() async {
        let idle = state.withLock { s -> HTTPConnection? in
            s.shutDown = true
            defer { s.idle = nil }
            return s.idle
        }
        if let idle { try? await idle.channel.close() }
    }

    /// Sends `request` and returns the whole answer, all within `timeout` (connecting,
    /// sending, and reading the body to its end).
    public func execute(_ request: Request, timeout: Duration) async throws(HTTPExchangeError) -> HTTPAnswer {
        guard let target = HTTPTarget(url: request.url) else { throw .invalidURL(request.url) }
        let deadline = NIODeadline.now() + TimeAmount.nanoseconds(timeout.nanoseconds)
        var head = HTTPRequestHead(version: .http1_1, method: request.method, uri: target.path, headers: request.headers)
        if !head.headers.contains(name: "Host") { head.headers.replaceOrAdd(name: "Host", value: target.hostHeader) }
        head.headers.replaceOrAdd(name: "Content-Length", value: String(request.body?.readableBytes ?? 0))

        if let reused = takeIdle(target.origin) {
            do {
                return try await exchange(on: reused, head: head, body: request.body, deadline: deadline)
            } catch let failure {
                // Stale keep-alive connection: see the type's comment on resending.
                guard !failure.answerStarted, failure.error == .closedBeforeAnswer || Self.isIO(failure.error) else {
                    throw failure.error
                }
            }
        }
        let connection = try await connect(target, deadline: deadline)
        do {
            return try await exchange(on: connection, head: head, body: request.body, deadline: deadline)
        } catch {
            throw error.error
        }
    }

    private static func isIO(_ error: HTTPExchangeError) -> Bool {
        if case .io = error { return true }
        return false
    }

    private func exchange(on connection: HTTPConnection, head: HTTPRequestHead, body: ByteBuffer?,
                          deadline: NIODeadline) async throws(ConnectionFailure) -> HTTPAnswer {
        let outcome: ExchangeOutcome
        do {
            outcome = try await withTaskCancellationHandler {
                try await connection.send(head, body: body, deadline: deadline).get()
            } onCancel: {
                connection.abandon(.cancelled)
            }
        } catch let failure as ConnectionFailure {
            throw failure
        } catch {
            throw ConnectionFailure(error: .io(String(describing: error)), answerStarted: true)
        }
        if outcome.keepAlive { park(connection) } else { connection.close() }
        return outcome.answer
    }

    private func connect(_ target: HTTPTarget, deadline: NIODeadline) async throws(HTTPExchangeError) -> HTTPConnection {
        let tls = try target.secure ? tlsSetup() : nil
        let remaining = deadline - .now()
        let limit = min(TimeAmount.nanoseconds(connectTimeout.nanoseconds), remaining)
        guard limit > .zero else { throw .deadlineExceeded }
        let opening = HTTPConnection.open(target, group: group, connectTimeout: limit, answerLimit: answerLimit, tls: tls)
        do {
            return try await withTaskCancellationHandler {
                try await opening.get()
            } onCancel: {
                opening.whenSuccess { $0.close() }
            }
        } catch {
            if Task.isCancelled { throw .cancelled }
            throw Self.connectFailure(error, deadlinePassed: NIODeadline.now() >= deadline, secure: target.secure)
        }
    }

    private func tlsSetup() throws(HTTPExchangeError) -> TLSConnectionSetup {
        if let made = state.withLock({ $0.tls }) { return made }
        let made = try TLSConnectionSetup(trust: trust)
        state.withLock { $0.tls = made }
        return made
    }

    private static func connectFailure(_ error: any Error, deadlinePassed: Bool, secure: Bool) -> HTTPExchangeError {
        if case ChannelError.connectTimeout = error { return deadlinePassed ? .deadlineExceeded : .connectTimeout }
        if let many = error as? NIOConnectionError {
            if let first = many.connectionErrors.first { return connectFailure(first.error, deadlinePassed: deadlinePassed, secure: secure) }
            if let dns = many.dnsAError ?? many.dnsAAAAError { return .connectFailed("cannot resolve \(many.host): \(dns)") }
            return .connectFailed("cannot resolve \(many.host)")
        }
        if let io = error as? IOError { return .connectFailed(AnswerCollector.reason(errno: io.errnoCode)) }
        if secure, let tls = TLSConnectionSetup.describe(error) { return .tls(tls) }
        return .connectFailed(String(describing: error))
    }

    /// The idle connection, if it is to `origin` and still open; any other is closed.
    private func takeIdle(_ origin: HTTPTarget.Origin) -> HTTPConnection? {
        let idle = state.withLock { s -> HTTPConnection? in
            defer { s.idle = nil }
            return s.idle
        }
        guard let idle else { return nil }
        guard idle.origin == origin, idle.channel.isActive else {
            idle.close()
            return nil
        }
        return idle
    }

    /// Keeps `connection` for the next call, closing it after `idleTimeout` unused.
    private func park(_ connection: HTTPConnection) {
        let (parking, replaced, refused) = state.withLock { s -> (Int, HTTPConnection?, Bool) in
            guard !s.shutDown else { return (0, nil, true) }
            let old = s.idle
            s.idle = connection
            s.parked += 1
            return (s.parked, old, false)
        }
        replaced?.close()
        if refused {
            connection.close()
            return
        }
        connection.channel.eventLoop.scheduleTask(in: .nanoseconds(idleTimeout.nanoseconds)) { [weak self] in
            guard let self else { return }
            let expired = self.state.withLock { s -> HTTPConnection? in
                guard s.parked == parking, let idle = s.idle, idle === connection else { return nil }
                s.idle = nil
                return idle
            }
            expired?.close()
        }
    }
}
