// SPDX-License-Identifier: MIT

/// Exponential backoff with full jitter: after the n-th consecutive failure the engine waits
/// a uniformly random time in `0 ... min(cap, base * 2^(n-1))`.
///
/// Full jitter spreads a gym's worth of gateways that all lost the backend at once, so they
/// do not come back in lockstep and knock it over again.
public struct BackoffPolicy: Sendable, Equatable {
    /// The ceiling of the first retry's window.
    public var base: Duration
    /// No window grows beyond this.
    public var cap: Duration
    /// A `Retry-After` longer than this is shortened to it, so a misconfigured backend cannot
    /// park the gateway for days.
    public var maximumRetryAfter: Duration

    public init(base: Duration = .seconds(1), cap: Duration = .seconds(60), maximumRetryAfter: Duration = .seconds(3600)) {
        self.base = base
        self.cap = max(cap, base)
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// The upper bound of the wait after `failures` consecutive failures (1 = first failure).
    public func window(afterFailures failures: Int) -> Duration {
        let exponent = min(max(failures, 1) - 1, 40)
        let window = base.seconds * Double(1 << UInt64(exponent))
        return .milliseconds(Int64((min(window, cap.seconds) * 1000).rounded()))
    }

    /// A random wait within the window.
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
