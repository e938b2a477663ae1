// SPDX-License-Identifier: MIT

/// One request the backend answered, for tests that check what was sent and when.
public struct RequestLogEntry: Sendable, Equatable {
    /// When the request arrived (before any injected delay).
    public var at: ContinuousClock.Instant
    public var method: String
    public var path: String
    public var status: Int
    /// Whether the body came with `Content-Encoding: gzip`.
    public var gzip: Bool
    /// Records or samples in the body, when it parsed.
    public var items: Int?
    /// Whether the bearer token matched.
    public var authorized: Bool
    /// `Blegate-Outbox-Depth`, when sent as an integer.
    public var outboxDepth: Int? = nil
    /// `Blegate-Version`, when sent.
    public var version: String? = nil
}
