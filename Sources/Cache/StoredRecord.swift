// SPDX-License-Identifier: MIT
import WearMetrics

/// Where a record is in its life.
public enum RecordState: String, Sendable, Equatable {
    /// Not yet held by the backend (includes records held back for an unpaired device).
    case pending
    /// The backend holds it.
    case delivered
    /// The backend refused it for good; kept with the reason, never sent again.
    case quarantined

    /// From `CacheSchema.stateColumn` (0 pending, 1 delivered, 2 quarantined).
    init(column: Int) {
        switch column {
        case 1: self = .delivered
        case CacheSchema.quarantined: self = .quarantined
        default: self = .pending
        }
    }
}

/// A record as the cache holds it.
public struct StoredRecord: Sendable, Equatable {
    public var id: String
    public var sequence: Int64
    public var clientID: String?
    public var state: RecordState
    /// Why it was quarantined.
    public var reason: String?
    public var record: WearMetrics
}
