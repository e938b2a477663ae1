// SPDX-License-Identifier: MIT
import Timing

/// Reconnect pacing: an exponential `Backoff` per failure kind, spread by jitter so that
/// ten straps dropped by the same glitch do not all knock on the adapter at once, plus how
/// hard flapping is punished.
public struct ReconnectPacing: Sendable, Hashable {
    public var steps: [ConnectFailureKind: Backoff]
    /// Fraction of the delay that is randomised (0.2 → delay × [0.8, 1.2]).
    public var jitter: Double
    /// Delay multiplier while a device is flapping.
    public var flappingMultiplier: Double
    /// Ceiling of any delay, flapping included.
    public var maximumDelay: Double

    public init(steps: [ConnectFailureKind: Backoff] = ReconnectPacing.defaultSteps, jitter: Double = 0.2,
                flappingMultiplier: Double = 4, maximumDelay: Double = 300) {
        self.steps = steps
        self.jitter = jitter
        self.flappingMultiplier = flappingMultiplier
        self.maximumDelay = maximumDelay
    }

    /// Everyday aborts retry fast; timeouts (strap away or asleep) slowly; "in progress"
    /// only waits for our own attempt to settle.
    public static let defaultSteps: [ConnectFailureKind: Backoff] = [
        .abortByLocal: Backoff(base: .seconds(1), cap: .seconds(30)),
        .inProgress: Backoff(base: .milliseconds(500), cap: .seconds(4)),
        .timeout: Backoff(base: .seconds(5), cap: .seconds(120)),
        .notReady: Backoff(base: .seconds(2), cap: .seconds(30)),
        .deviceGone: Backoff(base: .seconds(1), cap: .seconds(10)),
        .gattMissing: Backoff(base: .seconds(2), cap: .seconds(60)),
        .failed: Backoff(base: .seconds(2), cap: .seconds(60)),
        .other: Backoff(base: .seconds(2), cap: .seconds(60)),
    ]

    public func step(for kind: ConnectFailureKind) -> Backoff {
        steps[kind] ?? Backoff(base: .seconds(2), cap: .seconds(60))
    }
}
