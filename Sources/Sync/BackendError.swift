// SPDX-License-Identifier: MIT
import PrintableText

/// A failed exchange with the backend, worded for the person who set up the gym's gateway.
///
/// `kind` is what callers switch on; `message` is what they show. Messages name the endpoint
/// and the HTTP status but never the token or a member's client id.
public struct BackendError: Error, Sendable, CustomStringConvertible {
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unknownCode, codeAlreadyUsed, tokenRefused, unreachable, timeout, rateLimited,
                 unavailable, payloadTooLarge, badRequest, notFound, methodNotAllowed, serverError, unexpectedStatus,
                 invalidResponse, invalidConfiguration
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Pairing: the backend does not know the code (404).
        public static let unknownCode = Kind(.unknownCode)
        /// Pairing: the code was already exchanged (409); codes are single-use.
        public static let codeAlreadyUsed = Kind(.codeAlreadyUsed)
        /// 401/403, or no token configured: syncing stops until the token changes.
        public static let tokenRefused = Kind(.tokenRefused)
        /// No connection: refused, DNS failure, TLS failure, connection reset.
        public static let unreachable = Kind(.unreachable)
        /// Connected, but no complete answer before the deadline.
        public static let timeout = Kind(.timeout)
        /// 429.
        public static let rateLimited = Kind(.rateLimited)
        /// 503.
        public static let unavailable = Kind(.unavailable)
        /// 413: the batch is too large.
        public static let payloadTooLarge = Kind(.payloadTooLarge)
        /// 400/422: the backend refused the request as a whole.
        public static let badRequest = Kind(.badRequest)
        /// 404 outside pairing: the URL is wrong.
        public static let notFound = Kind(.notFound)
        /// 405: the endpoint exists but not with this method (a backend without `PUT`).
        public static let methodNotAllowed = Kind(.methodNotAllowed)
        /// 5xx other than 503.
        public static let serverError = Kind(.serverError)
        /// Any other status.
        public static let unexpectedStatus = Kind(.unexpectedStatus)
        /// 2xx with a body that does not follow the contract.
        public static let invalidResponse = Kind(.invalidResponse)
        /// The URL or token cannot be used at all.
        public static let invalidConfiguration = Kind(.invalidConfiguration)

        public var description: String { base.rawValue }
    }

    public let kind: Kind
    /// The URL that was called.
    public let endpoint: String
    /// The HTTP status, when a response arrived.
    public let status: Int?
    /// From `Retry-After` on 429/503, already converted to a delay.
    public let retryAfter: Duration?
    public let message: String

    public init(kind: Kind, endpoint: String, status: Int? = nil, retryAfter: Duration? = nil, message: String) {
        self.kind = kind
        self.endpoint = PrintableText.redactingCredentials(endpoint)
        self.status = status
        self.retryAfter = retryAfter
        // Messages carry URLs and backend texts: no credentials, nothing a terminal obeys.
        self.message = PrintableText.clean(Self.redactingURLs(message), limit: 2 * PrintableText.messageLimit)
    }

    public var description: String { message }

    /// Every `scheme://user:secret@host` in `text` with the credentials hidden.
    static func redactingURLs(_ text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        return text.split(separator: " ", omittingEmptySubsequences: false)
            .map { PrintableText.redactingCredentials(String($0)) }.joined(separator: " ")
    }

    /// Whether sending the same request later can succeed without anyone changing anything.
    public var isTransient: Bool {
        switch kind {
        case .unreachable, .timeout, .rateLimited, .unavailable, .serverError, .notFound, .methodNotAllowed, .unexpectedStatus, .invalidResponse:
            true
        default:
            false
        }
    }
}
