// SPDX-License-Identifier: MIT

/// Why an exchange ended without an answer, in the terms a caller words its own message in.
public enum HTTPExchangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not `http(s)://host[:port][/path]`.
    case invalidURL(String)
    /// No TCP connection within the connect timeout.
    case connectTimeout
    /// No TCP connection: refused, no route, name not resolved (`reason` says which).
    case connectFailed(String)
    /// The TLS handshake failed: an untrusted certificate, one for another host, no common
    /// protocol.
    case tls(String)
    /// The connection ended before the whole answer arrived.
    case closedBeforeAnswer
    /// The answer's body is larger than the client's limit (declared or as it arrived).
    case answerTooLarge(limit: Int)
    /// The whole exchange, body included, did not finish by the deadline.
    case deadlineExceeded
    /// The answer is not HTTP/1.
    case malformedAnswer(String)
    /// Any other failure of the connection mid-exchange (reset, broken pipe).
    case io(String)
    /// The calling task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case let .invalidURL(url): "not an http:// or https:// URL: \(url)"
        case .connectTimeout: "no connection within the connect timeout"
        case let .connectFailed(reason): reason
        case let .tls(reason): "TLS: \(reason)"
        case .closedBeforeAnswer: "the connection closed before the whole answer arrived"
        case let .answerTooLarge(limit): "the answer is larger than \(limit) bytes"
        case .deadlineExceeded: "no whole answer before the deadline"
        case let .malformedAnswer(reason): "the answer is not HTTP/1: \(reason)"
        case let .io(reason): reason
        case .cancelled: "cancelled"
        }
    }
}
