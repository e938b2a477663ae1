// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Timing

/// Which certificates an https backend's certificate must chain to.
public enum TLSTrust: Sendable, Hashable {
    /// The system's trust roots (Debian's ca-certificates).
    case system
    /// The PEM certificates in this file only (a private CA, a test's own certificate).
    case pemFile(String)
}

/// The HTTP side of talking to the backend, on AsyncHTTPClient: the client set-up and the
/// one exchange that `BackendClient` and `blegate doctor`'s probe both use, so the doctor
/// sees what the gateway would.
public enum BackendTransport {
    /// A whole answer: status, headers and body.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: ByteBuffer
    }

    /// Why an exchange ended without an answer, in the terms a caller words its message in.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The URL is not `http(s)://host[:port][/path]`.
        case invalidURL(String)
        /// No connection (TCP and, for https, TLS) within the connect timeout.
        case connectTimeout
        /// No connection, or it failed mid-exchange: refused, reset, name not resolved.
        case unreachable(String)
        /// The TLS handshake failed: an untrusted certificate, one for another host.
        case tls(String)
        /// The connection ended before the whole answer arrived.
        case closedBeforeAnswer
        /// The answer's body is larger than the limit (declared or as it arrived).
        case answerTooLarge(limit: Int)
        /// The whole exchange, body included, did not finish by the deadline.
        case deadlineExceeded
        /// The calling task was cancelled.
        case cancelled

        public var description: String {
            switch self {
            case let .invalidURL(url): "not an http:// or https:// URL: \(url)"
            case .connectTimeout: "no connection within the connect timeout"
            case let .unreachable(reason): reason
            case let .tls(reason): "TLS: \(reason)"
            case .closedBeforeAnswer: "the connection closed before the whole answer arrived"
            case let .answerTooLarge(limit): "the answer is larger than \(limit) bytes"
            case .deadlineExceeded: "no whole answer before the deadline"
            case .cancelled: "cancelled"
            }
        }
    }

    /// A client for one backend: HTTP/1.1 only, kept-alive connections closed after
    /// `idleTimeout` unused, redirects returned as answers (never followed), and a connection
    /// that cannot be made failing the call at once (no quiet retries: the sync engine has
    /// its own backoff). https is checked fully against `trust`, the host name (or the
    /// address) in the URL included. Shut it down when done (`shutdown()`).
    ///
    /// - Parameter eventLoopGroup: by default NIO's singleton group.
    public static func makeClient(eventLoopGroup: (any EventLoopGroup)? = nil, connectTimeout: Duration = .seconds(10),
                                  idleTimeout: Duration = .seconds(60), trust: TLSTrust = .system) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        switch trust {
        case .system: tls.trustRoots = .default
        case let .pemFile(path): tls.trustRoots = .file(path)
        }
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .nanoseconds(connectTimeout.nanoseconds))
        configuration.decompression = .disabled
        configuration.connectionPool.idleTimeout = .nanoseconds(idleTimeout.nanoseconds)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.httpVersion = .http1Only
        return HTTPClient(eventLoopGroup: eventLoopGroup ?? HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// Sends `request` and reads the whole answer, at most `answerLimit` bytes of body, all
    /// within `timeout` (connecting, sending, and reading the body to its end).
    ///
    /// **Resend.** A backend may close a kept-alive connection while it sits idle (its own
    /// keep-alive timeout, a restart), which the client can learn only when it writes on it.
    /// When the connection closes before any answer came, the request is sent once more.
    /// This can deliver a request twice if the backend processed it and then died before
    /// answering; callers send only requests whose repetition is harmless (the backend
    /// de-duplicates records by id).
    public static func exchange(_ client: HTTPClient, _ request: HTTPClientRequest, timeout: Duration,
                                answerLimit: Int) async throws(Failure) -> Answer {
        let deadline = NIODeadline.now() + .nanoseconds(timeout.nanoseconds)
        do {
            // AsyncHTTPClient's deadline ends at the answer's head; the race below holds
            // the body to it as well.
            return try await withThrowingTaskGroup(of: Answer?.self) { group in
                group.addTask { try await send(client, request, deadline: deadline, answerLimit: answerLimit) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let answer = first else { throw Failure.deadlineExceeded }
                return answer
            }
        } catch {
            throw classify(error, answerLimit: answerLimit)
        }
    }

    private static func send(_ client: HTTPClient, _ request: HTTPClientRequest, deadline: NIODeadline,
                             answerLimit: Int) async throws -> Answer {
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: deadline)
        } catch where closedBeforeAnswer(error) && !Task.isCancelled {
            response = try await client.execute(request, deadline: deadline)
        }
        let body = try await response.body.collect(upTo: answerLimit)
        return Answer(status: Int(response.status.code), headers: response.headers, body: body)
    }

    /// Whether `error` says the connection ended before the answer began (see the resend above).
    private static func closedBeforeAnswer(_ error: any Error) -> Bool {
        if let io = error as? IOError { return io.errnoCode == ECONNRESET || io.errnoCode == EPIPE }
        return classify(error, answerLimit: 0) == .closedBeforeAnswer
    }

    static func classify(_ error: any Error, answerLimit: Int) -> Failure {
        if let failure = error as? Failure { return failure }
        if error is CancellationError { return .cancelled }
        if error is NIOTooManyBytesError { return .answerTooLarge(limit: answerLimit) }
        if let tls = describeTLS(error) { return .tls(tls) }
        if let http = error as? HTTPClientError {
            switch http {
            case .invalidURL, .emptyHost, .emptyScheme: return .invalidURL(String(describing: http))
            case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout: return .connectTimeout
            case .deadlineExceeded, .readTimeout, .writeTimeout: return .deadlineExceeded
            case .remoteConnectionClosed: return .closedBeforeAnswer
            case .cancelled: return .cancelled
            default: return .unreachable(String(describing: http))
            }
        }
        if let many = error as? NIOConnectionError {
            if let first = many.connectionErrors.first { return classify(first.error, answerLimit: answerLimit) }
            if let dns = many.dnsAError ?? many.dnsAAAAError { return .unreachable("cannot resolve \(many.host): \(dns)") }
            return .unreachable("cannot resolve \(many.host)")
        }
        if let io = error as? IOError { return .unreachable(reason(errno: io.errnoCode)) }
        if let channel = error as? ChannelError {
            switch channel {
            case .connectTimeout: return .connectTimeout
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed: return .closedBeforeAnswer
            default: break
            }
        }
        if error is HTTPParserError { return .unreachable("the answer is not HTTP/1: \(error)") }
        return .unreachable(String(describing: error))
    }

    /// A TLS failure in words someone setting up a gateway can act on; nil for other errors.
    static func describeTLS(_ error: any Error) -> String? {
        if let extra = error as? NIOSSLExtraError {
            if extra == .failedToValidateHostname {
                return "the backend's certificate is not for this host name (\(extra))"
            }
            return String(describing: extra)
        }
        guard let ssl = error as? NIOSSLError else { return nil }
        let text = String(describing: ssl)
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the backend's certificate is not trusted: it does not chain to a trusted root, or has expired (\(text))"
        }
        if case .uncleanShutdown = ssl { return "the backend closed the connection without ending TLS" }
        if case .failedToLoadCertificate = ssl { return "cannot load the trusted certificates: \(text)" }
        return "handshake failed: \(text)"
    }

    /// `connection reset by peer` for ECONNRESET: strerror's words, lower-cased to sit in a sentence.
    static func reason(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let first = text.first else { return "error \(code)" }
        return first.lowercased() + text.dropFirst()
    }
}
