// SPDX-License-Identifier: MIT

/// Exponential backoff: after the n-th consecutive failure the window is
/// `min(cap, base × 2^(n-1))`. Callers add their own jitter: the sync engine waits a
/// uniformly random time within the window (full jitter, so a gym's gateways that lost the
/// backend together do not return in lockstep), the link code spreads the window by a
/// fraction, the cache's commit thread retries at the window itself.
public struct Backoff: Sendable, Hashable {
    /// The first failure's window.
    public var base: Duration
    /// No window grows beyond this.
    public var cap: Duration

    public init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = max(cap, base)
    }

    /// The window after `failures` consecutive failures (values below 1 count as 1).
    public func window(afterFailures failures: Int) -> Duration {
        let exponent = min(max(failures, 1) - 1, 40)
        let window = base.seconds * Double(UInt64(1) << UInt64(exponent))
        guard window < cap.seconds else { return cap }
        return .nanoseconds(Int64(window * 1e9))
    }

    /// A uniformly random wait within the window (full jitter), in whole milliseconds.
    public func delay<G: RandomNumberGenerator>(afterFailures failures: Int, using generator: inout G) -> Duration {
        let upper = window(afterFailures: failures).seconds
        guard upper > 0 else { return .zero }
        let s = Double.random(in: 0...upper, using: &generator)
        return .milliseconds(Int64((s * 1000).rounded()))
    }

    public func delay(afterFailures failures: Int) -> Duration {
        var g = SystemRandomNumberGenerator()
        return delay(afterFailures: failures, using: &g)
    }
}
