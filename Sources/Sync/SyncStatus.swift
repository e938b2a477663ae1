// SPDX-License-Identifier: MIT
import Outbox
import WearMetrics

/// One request's outcome, successful or not, as `blegate status` shows "the last sync".
public struct SyncReport: Sendable, Equatable {
    /// Records in the request.
    public var records: Int
    public var inserted: Int
    public var duplicates: Int
    public var rejected: Int
    /// Records the samples sink had no sample type for (marked delivered, see docs/sync.md).
    public var skipped: Int
    public var duration: Duration
    public var endpoint: String
    /// nil when no response arrived (unreachable, timeout) or no request was needed.
    public var httpStatus: Int?
    public var at: UTCTimestamp
    /// Why the request failed; nil on success.
    public var error: String?

    public init(records: Int, inserted: Int, duplicates: Int, rejected: Int, skipped: Int,
                duration: Duration, endpoint: String, httpStatus: Int?, at: UTCTimestamp, error: String? = nil) {
        self.records = records
        self.inserted = inserted
        self.duplicates = duplicates
        self.rejected = rejected
        self.skipped = skipped
        self.duration = duration
        self.endpoint = endpoint
        self.httpStatus = httpStatus
        self.at = at
        self.error = error
    }
}

/// One entry of the status page's "last errors" list.
public struct SyncErrorEntry: Sendable, Equatable {
    public var at: UTCTimestamp
    public var category: ErrorCategory
    public var message: String
    public var httpStatus: Int?

    public init(at: UTCTimestamp, category: ErrorCategory, message: String, httpStatus: Int? = nil) {
        self.at = at
        self.category = category
        self.message = message
        self.httpStatus = httpStatus
    }
}

/// A snapshot of the sync engine for `blegate status`. Holds no token and no client id.
public struct SyncStatus: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Not started yet.
        case starting
        /// Caught up; waiting for new records or the interval.
        case idle
        /// A request is in flight.
        case syncing
        /// Waiting after a failure; the next attempt is at `until`.
        case backingOff(until: UTCTimestamp, reason: String)
        /// The backend refused the token (or there is none): nothing is sent until the token
        /// file changes or `reloadToken()` is called.
        case unauthorized(reason: String)
        /// `run()` returned.
        case stopped

        /// One word, for status output and metrics labels.
        public var name: String {
            switch self {
            case .starting: "starting"
            case .idle: "idle"
            case .syncing: "syncing"
            case .backingOff: "backing_off"
            case .unauthorized: "unauthorized"
            case .stopped: "stopped"
            }
        }
    }

    public static let maximumErrors = 10

    public var state: State = .starting
    /// The sink's URL.
    public var endpoint: String
    public var lastSync: SyncReport?
    /// Failed attempts since the last success; drives the backoff.
    public var consecutiveFailures = 0
    /// The last `maximumErrors` errors, oldest first.
    public var lastErrors: [SyncErrorEntry] = []
    /// Since start: records the backend now holds, and records quarantined.
    public var delivered = 0
    public var quarantined = 0
    /// Since start, per kind: documents (workouts, profile metrics) the backend now holds,
    /// and documents quarantined.
    public var documentsDelivered: [DocumentKind: Int] = [:]
    public var documentsQuarantined: [DocumentKind: Int] = [:]
    /// Since start: requests to the backend by how they ended.
    public var requests = SyncRequestCounts()
    /// When the backend last took a request.
    public var lastSuccessAt: UTCTimestamp?

    public init(endpoint: String) { self.endpoint = endpoint }

    mutating func record(_ error: SyncErrorEntry) {
        lastErrors.append(error)
        if lastErrors.count > Self.maximumErrors { lastErrors.removeFirst(lastErrors.count - Self.maximumErrors) }
    }
}

/// Requests to the backend since start, by how they ended: what `blegate status` shows
/// and Prometheus counts as `blegate_sync_requests_total{result}`.
public struct SyncRequestCounts: Sendable, Equatable, Codable {
    /// The backend took it (2xx).
    public var ok = 0
    /// Another answer: 4xx (except the token's 401/403), 5xx, 413 before a split.
    public var httpError = 0
    /// No answer: refused, unreachable, timed out.
    public var unreachable = 0
    /// The token was refused (401, 403) or there is none.
    public var unauthorized = 0

    public init() {}

    /// Counts one request by the answer it got (`status` nil: none) and whether it failed.
    mutating func count(status: Int?, failed: Bool) {
        switch (failed, status) {
        case (false, _): ok += 1
        case (true, 401?), (true, 403?): unauthorized += 1
        case (true, nil): unreachable += 1
        case (true, _?): httpError += 1
        }
    }
}
