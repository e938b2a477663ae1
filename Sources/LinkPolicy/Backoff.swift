// SPDX-License-Identifier: MIT

/// The retry pace for one kind of failure: `base × 2^(n-1)`, capped, with jitter so that
/// ten straps dropped by the same glitch do not all knock on the adapter at once.
public struct BackoffStep: Sendable, Hashable {
    public var base: Double
    public var cap: Double

    public init(base: Double, cap: Double) {
        self.base = base
        self.cap = cap
    }

    /// The delay before attempt `n + 1` after `n` consecutive failures (n ≥ 1), before
    /// jitter.
    public func delay(afterFailures n: Int) -> Double {
        guard n > 0 else { return 0 }
        let exponent = Double(min(n - 1, 30))
        return min(cap, base * Double(UInt64(1) << UInt64(exponent)))
    }
}

/// Retry pacing per failure kind, plus how hard flapping is punished.
public struct BackoffPolicy: Sendable, Hashable {
    public var steps: [ConnectFailureKind: BackoffStep]
    /// Fraction of the delay that is randomised (0.2 → delay × [0.8, 1.2]).
    public var jitter: Double
    /// Delay multiplier while a device is flapping.
    public var flappingMultiplier: Double
    /// Ceiling of any delay, flapping included.
    public var maximumDelay: Double

    public init(steps: [ConnectFailureKind: BackoffStep] = BackoffPolicy.defaultSteps, jitter: Double = 0.2,
                flappingMultiplier: Double = 4, maximumDelay: Double = 300) {
        self.steps = steps
        self.jitter = jitter
        self.flappingMultiplier = flappingMultiplier
        self.maximumDelay = maximumDelay
    }

    /// Everyday aborts retry fast; timeouts (strap away or asleep) slowly; "in progress"
    /// only waits for our own attempt to settle.
    public static let defaultSteps: [ConnectFailureKind: BackoffStep] = [
        .abortByLocal: BackoffStep(base: 1, cap: 30),
        .inProgress: BackoffStep(base: 0.5, cap: 4),
        .timeout: BackoffStep(base: 5, cap: 120),
        .notReady: BackoffStep(base: 2, cap: 30),
        .deviceGone: BackoffStep(base: 1, cap: 10),
        .gattMissing: BackoffStep(base: 2, cap: 60),
        .failed: BackoffStep(base: 2, cap: 60),
        .other: BackoffStep(base: 2, cap: 60),
    ]

    public func step(for kind: ConnectFailureKind) -> BackoffStep {
        steps[kind] ?? BackoffStep(base: 2, cap: 60)
    }
}

/// A small deterministic generator (SplitMix64), so tests and simulations can pin the
/// jitter; the gateway seeds it from the clock.
public struct JitterSource: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A value in [0, 1).
    public mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
