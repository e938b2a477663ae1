// SPDX-License-Identifier: MIT
import Timing

/// One device's memory of how its connections went, deciding how long to wait before
/// the next attempt.
///
/// A link that delivered data is a success, however short: when it drops, the next
/// attempt starts at once and the failure count is cleared, because a strap that sends
/// heart rate is worth every reconnect. Only links that end before delivering anything
/// (a strap that connects and drops again within seconds) are flaps: they grow the
/// backoff, and `flapThreshold` of them within `flapWindow` multiply every delay. A link
/// that stayed up for `stableAfter` seconds counts as a success even without data.
public struct ReconnectTracker: Sendable {
    public var policy: ReconnectPacing
    /// A link must last this long (seconds) to count as a success.
    public var stableAfter: Double
    public var flapWindow: Double
    public var flapThreshold: Int

    public private(set) var consecutiveFailures = 0
    public private(set) var lastFailure: ConnectFailureKind?
    /// Start times of short-lived links within the window.
    public private(set) var flaps: [Double] = []
    private var connectedAt: Double?
    private var jitter: SeededRandom

    public init(policy: ReconnectPacing = ReconnectPacing(), stableAfter: Double = 10, flapWindow: Double = 600,
                flapThreshold: Int = 3, seed: UInt64 = 1) {
        self.policy = policy
        self.stableAfter = stableAfter
        self.flapWindow = flapWindow
        self.flapThreshold = flapThreshold
        self.jitter = SeededRandom(seed: seed)
    }

    /// True while enough short links happened recently.
    public func isFlapping(now: Double) -> Bool {
        flaps.filter { now - $0 <= flapWindow }.count >= flapThreshold
    }

    /// The link is up (connected and subscribed).
    public mutating func linkUp(at now: Double) {
        connectedAt = now
    }

    /// The link went down after being up. Returns true when it counted as a flap.
    /// `delivered`: the link brought data. `deviceFault` is false when the cause was not
    /// the strap's (bluetoothd restarted, the adapter went away): such a loss is neither a
    /// flap nor a success.
    @discardableResult
    public mutating func linkDown(at now: Double, delivered: Bool = false, deviceFault: Bool = true) -> Bool {
        defer { connectedAt = nil }
        guard let since = connectedAt, deviceFault else { return false }
        flaps.removeAll { now - $0 > flapWindow }
        if delivered || now - since >= stableAfter {
            consecutiveFailures = 0
            lastFailure = nil
            return false
        }
        flaps.append(since)
        // A short link is a failure of its own: the pace keeps growing.
        consecutiveFailures += 1
        lastFailure = lastFailure ?? .abortByLocal
        return true
    }

    /// An attempt failed before the link was up.
    public mutating func failed(_ kind: ConnectFailureKind) {
        // "In progress" is our own earlier attempt, not evidence about the strap.
        if kind != .inProgress { consecutiveFailures += 1 }
        lastFailure = kind
    }

    /// Seconds to wait before the next attempt (0 when nothing failed).
    public mutating func nextDelay(now: Double) -> Double {
        guard let kind = lastFailure else { return 0 }
        let n = kind == .inProgress ? 1 : max(1, consecutiveFailures)
        var d = policy.step(for: kind).window(afterFailures: n).seconds
        if isFlapping(now: now) { d *= policy.flappingMultiplier }
        d = min(d, policy.maximumDelay)
        let spread = policy.jitter
        return max(0, d * (1 - spread + 2 * spread * jitter.unit()))
    }
}
