// SPDX-License-Identifier: MIT
import PrintableText
#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Outbox
import Synchronization
import WearMetrics
import Timing

/// The backend's HTTP API (docs/backend-openapi.yaml): pairing, metrics, samples.
///
/// Every call carries the bearer token from `TokenStore` and a gzip body, and ends with a
/// result or a `BackendError` whose message a gym engineer can act on. The client keeps no
/// state between calls beyond AsyncHTTPClient's kept-alive connection, so the sync engine
/// decides all retrying; the one exception is a request resent once when its connection
/// closed before any answer came (`BackendTransport.exchange`), which is safe because the
/// backend de-duplicates records by id.
public final class BackendClient: Sendable {
    public let baseURL: String
    public let samplesPath: String
    public let token: TokenStore
    public let requestTimeout: Duration
    private let http: HTTPClient
    private let ownsHTTPClient: Bool
    private let shutDown = Atomic<Bool>(false)

    /// - Parameters:
    ///   - baseURL: `backend.url`, `http://` or `https://`; paths are appended to it.
    ///   - samplesPath: `backend.samples_path`, for the samples sink.
    ///   - requestTimeout: the whole exchange, connect to last response byte.
    ///   - connectTimeout: how long to wait for TCP (and TLS) to come up.
    ///   - trust: what an https backend's certificate must chain to.
    ///   - httpClient: share one (its own settings then apply, see
    ///     `BackendTransport.makeClient`); by default the client makes its own (call `shutdown()`).
    ///   - eventLoopGroup: where the client it makes runs: the gateway passes its one event
    ///     loop thread, which the wall shares; by default NIO's singleton group.
    public init(baseURL: String, token: TokenStore, samplesPath: String = "/api/v1/samples",
                requestTimeout: Duration = .seconds(30), connectTimeout: Duration = .seconds(10), trust: TLSTrust = .system,
                httpClient: HTTPClient? = nil, eventLoopGroup: (any EventLoopGroup)? = nil) throws(BackendError) {
        let lower = baseURL.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"),
              baseURL.split(separator: "/", omittingEmptySubsequences: true).count >= 2 else {
            throw BackendError(kind: .invalidConfiguration, endpoint: baseURL,
                               message: "backend.url: must be an http:// or https:// URL, got \"\(baseURL)\". Example: url = \"https://backend.example/\"")
        }
        guard samplesPath.hasPrefix("/") else {
            throw BackendError(kind: .invalidConfiguration, endpoint: samplesPath,
                               message: "backend.samples_path: must start with /, got \"\(samplesPath)\". Example: samples_path = \"/api/v1/samples\"")
        }
        self.baseURL = baseURL
        self.samplesPath = samplesPath
        self.token = token
        self.requestTimeout = requestTimeout
        if let httpClient {
            self.http = httpClient
            self.ownsHTTPClient = false
        } else {
            // Redirects come back as answers (a redirected POST is a misconfigured URL, said
            // so in `failure`), and a refused connection fails at once: the engine does its
            // own backoff, and its status should say "unreachable", not "timed out".
            self.http = BackendTransport.makeClient(eventLoopGroup: eventLoopGroup, connectTimeout: connectTimeout, trust: trust)
            self.ownsHTTPClient = true
        }
    }

    /// Closes the client's connections; only needed when it made its own HTTP client.
    /// Calls after this fail as `unreachable`.
    public func shutdown() async throws {
        guard ownsHTTPClient, !shutDown.exchange(true, ordering: .relaxed) else { return }
        try await http.shutdown()
    }

    deinit {
        // An owned AsyncHTTPClient must be shut down before it goes; this one was not.
        if ownsHTTPClient, !shutDown.load(ordering: .relaxed) { _ = http.shutdown() }
    }

    public var metricsURL: String { url("/api/v1/metrics") }
    public var workoutsURL: String { url("/api/v1/workouts") }
    public var profileMetricsURL: String { url("/api/v1/profile-metrics") }
    public var pairURL: String { url("/api/v1/pair") }
    public var samplesURL: String { url(samplesPath) }

    func url(_ path: String) -> String {
        var base = Substring(baseURL)
        while base.hasSuffix("/") { base = base.dropLast() }
        return base + path
    }

    // MARK: Calls

    /// Exchanges a member's pairing code for the client id their records carry from now on.
    public func pair(code: String, device: PairingDevice) async throws(BackendError) -> String {
        let body = Wire.encode(Wire.PairRequest(code: code, device: .init(address: device.address, name: device.name, model: device.model)))
        let endpoint = pairURL
        let response = try await exchange(endpoint, body: body)
        switch response.status {
        case 200..<300:
            guard let pair = Wire.decode(Wire.Pair.self, from: response.body), !pair.clientID.isEmpty else {
                throw BackendError(kind: .invalidResponse, endpoint: endpoint, status: response.status,
                                   message: "backend answered the pairing at \(endpoint) with \(response.status) but no client_id; the backend does not follow the blegate contract")
            }
            // The id is kept and shown as it is (`blegate devices`, every record carries
            // it): one that is not printable text is refused, not altered.
            guard PrintableText.isClean(pair.clientID, limit: Self.clientIDLimit) else {
                throw BackendError(kind: .invalidResponse, endpoint: endpoint, status: response.status,
                                   message: "backend answered the pairing at \(endpoint) with a client_id that is not printable text of at most \(Self.clientIDLimit) characters (\(PrintableText.clean(pair.clientID, limit: 40))); the backend does not follow the blegate contract")
            }
            return pair.clientID
        case 404:
            throw BackendError(kind: .unknownCode, endpoint: endpoint, status: 404,
                               message: "pairing code \(code) is unknown to the backend; check it against the code the member was given (it is sent as typed; blegate-server ignores letter case, another backend may not)")
        case 409:
            throw BackendError(kind: .codeAlreadyUsed, endpoint: endpoint, status: 409,
                               message: "pairing code \(code) was already used; ask the member for a new code")
        default:
            throw failure(response, endpoint: endpoint)
        }
    }

    /// Sends records to `POST /api/v1/metrics`. An empty list checks reachability and the token.
    /// `outboxDepth` goes out as `Blegate-Outbox-Depth` when known.
    public func postMetrics(gatewayID: String, records: [OutboxRecord], outboxDepth: Int? = nil) async throws(BackendError) -> MetricsResult {
        let endpoint = metricsURL
        let response = try await exchange(endpoint, body: MetricsRequest.body(gatewayID: gatewayID, records: records), outboxDepth: outboxDepth)
        return try accounting(response, endpoint: endpoint)
    }

    /// Sends documents as they are stored: workouts to `POST /api/v1/workouts` (or `PUT`
    /// with `replace`, for corrections), profile metrics to `POST /api/v1/profile-metrics`.
    /// The answer has the shape of the metrics answer.
    public func postDocuments(gatewayID: String, kind: DocumentKind, documents: [OutboxDocument], replace: Bool = false,
                              outboxDepth: Int? = nil) async throws(BackendError) -> MetricsResult {
        let endpoint = documentsURL(kind)
        let body = DocumentRequest.body(gatewayID: gatewayID, kind: kind, documents: documents)
        let response = try await exchange(endpoint, body: body, method: replace ? .PUT : .POST, outboxDepth: outboxDepth)
        return try accounting(response, endpoint: endpoint)
    }

    public func documentsURL(_ kind: DocumentKind) -> String {
        switch kind {
        case .workout: workoutsURL
        case .profileMetric: profileMetricsURL
        }
    }

    /// `{inserted, duplicates, rejected}` out of a 2xx answer, else the failure.
    private func accounting(_ response: Response, endpoint: String) throws(BackendError) -> MetricsResult {
        guard (200..<300).contains(response.status) else { throw failure(response, endpoint: endpoint) }
        guard let m = Wire.decode(Wire.Metrics.self, from: response.body), m.inserted >= 0, m.duplicates >= 0 else {
            throw BackendError(kind: .invalidResponse, endpoint: endpoint, status: response.status,
                               message: "backend answered \(endpoint) with \(response.status) but not {inserted, duplicates, rejected}; will send again")
        }
        // The backend's reasons go to the cache, the journal and `blegate cache stats`:
        // made printable here, capped, and without the token if the backend echoes it.
        let rejected = (m.rejected ?? []).map { r in
            OutboxRejection(id: r.id, reason: r.reason.map(rejectionReason) ?? "rejected by the backend without a reason")
        }
        return MetricsResult(inserted: m.inserted, duplicates: m.duplicates, rejected: rejected, status: response.status)
    }

    /// Sends samples to the samples sink (`POST {samples_path}`).
    public func postSamples(_ samples: [Sample], outboxDepth: Int? = nil) async throws(BackendError) -> SamplesResult {
        let endpoint = samplesURL
        let response = try await exchange(endpoint, body: Sample.requestBody(samples), outboxDepth: outboxDepth)
        guard (200..<300).contains(response.status) else { throw failure(response, endpoint: endpoint) }
        guard let s = Wire.decode(Wire.Samples.self, from: response.body), s.inserted >= 0, s.duplicates >= 0 else {
            throw BackendError(kind: .invalidResponse, endpoint: endpoint, status: response.status,
                               message: "backend answered \(endpoint) with \(response.status) but not {inserted, duplicates}; will send again")
        }
        return SamplesResult(inserted: s.inserted, duplicates: s.duplicates, status: response.status)
    }

    // MARK: HTTP

    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    /// One request; `body` nil sends none (a GET).
    func exchange(_ endpoint: String, body: String?, method: HTTPMethod = .POST,
                  outboxDepth: Int? = nil) async throws(BackendError) -> Response {
        var request = HTTPClientRequest(url: endpoint)
        request.method = method
        if body != nil { request.headers.add(name: "Content-Type", value: "application/json") }
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "blegate")
        request.headers.add(name: "Blegate-Version", value: BlegateVersion.current)
        if let outboxDepth { request.headers.add(name: "Blegate-Outbox-Depth", value: String(outboxDepth)) }
        if let token = token.token { request.headers.add(name: "Authorization", value: "Bearer " + token) }
        do {
            if let body {
                request.headers.add(name: "Content-Encoding", value: "gzip")
                request.body = .bytes(try Gzip.compress(body))
            }
        } catch {
            throw BackendError(kind: .invalidConfiguration, endpoint: endpoint, message: "cannot gzip the request body: \(error)")
        }
        // One deadline for the whole exchange, the answer's body included: a backend that
        // trickles its body a byte a second holds sync no longer than any other timeout.
        do {
            let answer = try await BackendTransport.exchange(http, request, timeout: requestTimeout, answerLimit: Self.answerLimit)
            return Response(status: answer.status, headers: answer.headers, body: Array(answer.body.readableBytesView))
        } catch {
            throw transportFailure(error, endpoint: endpoint)
        }
    }

    /// The largest answer read; the contract's answers are a few hundred bytes.
    static let answerLimit = 4 << 20

    private func transportFailure(_ error: BackendTransport.Failure, endpoint: String) -> BackendError {
        switch error {
        case .deadlineExceeded:
            return BackendError(kind: .timeout, endpoint: endpoint,
                                message: "backend \(endpoint) did not answer within \(requestTimeout.readable) (its whole answer, body included)")
        case .answerTooLarge:
            return BackendError(kind: .invalidResponse, endpoint: endpoint,
                                message: "backend \(endpoint) answered with more than \(Self.answerLimit >> 20) MiB; an answer is a few counts")
        case .connectTimeout:
            return BackendError(kind: .unreachable, endpoint: endpoint,
                                message: "backend \(endpoint) unreachable: no connection within the connect timeout")
        case .closedBeforeAnswer:
            return BackendError(kind: .unreachable, endpoint: endpoint,
                                message: "backend \(endpoint) closed the connection before answering")
        case .invalidURL:
            return BackendError(kind: .invalidConfiguration, endpoint: endpoint,
                                message: "backend.url: \(endpoint) is not an http:// or https:// URL with a host. Example: url = \"https://backend.example/\"")
        default:
            return BackendError(kind: .unreachable, endpoint: endpoint, message: "backend \(endpoint) unreachable: \(error)")
        }
    }

    /// The longest client id a pairing may return.
    static let clientIDLimit = 200

    /// A backend's rejection reason as the gateway keeps and shows it.
    func rejectionReason(_ reason: String) -> String {
        let text = PrintableText.redacting(token.token, in: reason)
        return PrintableText.isClean(text, limit: PrintableText.messageLimit) ? text : PrintableText.clean(text, limit: PrintableText.messageLimit)
    }

    /// A non-2xx answer as an error, classified per docs/sync.md.
    func failure(_ r: Response, endpoint: String) -> BackendError {
        // The backend's words, made printable and without the token if it echoes it.
        let detail = Wire.errorText(r.body).map { ": " + PrintableText.clean(PrintableText.redacting(token.token, in: $0), limit: PrintableText.messageLimit) } ?? ""
        switch r.status {
        case 401, 403:
            let fix = token.path.map { "put a valid token in \($0); syncing resumes when the file changes" } ?? "configure backend.token_file"
            let what = token.token == nil ? "no token is configured" : "the backend refused the token"
            return BackendError(kind: .tokenRefused, endpoint: endpoint, status: r.status,
                                message: "\(what) (\(r.status) from \(endpoint))\(detail); \(fix)")
        case 413:
            return BackendError(kind: .payloadTooLarge, endpoint: endpoint, status: 413,
                                message: "backend \(endpoint) refused the batch as too large (413)\(detail)")
        case 429, 503:
            let retry = r.headers.first(name: "Retry-After").flatMap { RetryAfter.parse($0, now: UTCTimestamp.now) }
            let after = retry.map { ", asks to retry after \($0.readable)" } ?? ""
            return BackendError(kind: r.status == 429 ? .rateLimited : .unavailable, endpoint: endpoint, status: r.status, retryAfter: retry,
                                message: "backend \(endpoint) is \(r.status == 429 ? "rate limiting" : "unavailable") (\(r.status))\(after)\(detail)")
        case 400, 422:
            return BackendError(kind: .badRequest, endpoint: endpoint, status: r.status,
                                message: "backend \(endpoint) refused the request (\(r.status))\(detail)")
        case 404:
            return BackendError(kind: .notFound, endpoint: endpoint, status: 404,
                                message: "backend has nothing at \(endpoint) (404); check backend.url\(endpoint == samplesURL ? " and backend.samples_path" : "")")
        case 405:
            return BackendError(kind: .methodNotAllowed, endpoint: endpoint, status: 405,
                                message: "backend \(endpoint) does not accept this method (405)\(detail)")
        case 300...399:
            let target = r.headers.first(name: "Location").map { " to \(PrintableText.clean(PrintableText.redactingCredentials($0), limit: 200))" } ?? ""
            return BackendError(kind: .unexpectedStatus, endpoint: endpoint, status: r.status,
                                message: "backend \(endpoint) redirects (\(r.status))\(target); blegate does not follow redirects with health data: set backend.url to the address it names")
        case 500...599:
            return BackendError(kind: .serverError, endpoint: endpoint, status: r.status,
                                message: "backend \(endpoint) failed with \(r.status)\(detail)")
        default:
            return BackendError(kind: .unexpectedStatus, endpoint: endpoint, status: r.status,
                                message: "backend \(endpoint) answered with unexpected status \(r.status)\(detail)")
        }
    }
}

