// SPDX-License-Identifier: MIT
import Outbox

/// What the sync engine just did, in order, for tests and for a live status feed.
/// Instants are on `ContinuousClock`, so tests can check that a wait was respected.
public enum SyncEvent: Sendable {
    /// A request succeeded; its records are marked delivered or quarantined.
    case delivered(SyncReport, at: ContinuousClock.Instant)
    /// Records the backend refused for good, now quarantined.
    case quarantined([OutboxRejection])
    /// A 413 made the engine split a batch of `records` in two.
    case split(records: Int)
    /// An attempt failed; the engine waits `delay` (from Retry-After when `honouredRetryAfter`).
    case backingOff(error: String, status: Int?, delay: Duration, honouredRetryAfter: Bool, at: ContinuousClock.Instant)
    /// Syncing paused until the token changes.
    case unauthorized(String)
    /// A token was read again after `reloadToken()` or a file change.
    case tokenReloaded
    /// Nothing is pending.
    case caughtUp
    /// `run()` is returning.
    case stopped
}
