// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import Timing

/// When one strap's next notification leaves, as real straps notify: each on its own
/// clock, started at its own phase, each interval varying as heart beats do.
///
/// Real straps are independent radios: their notifications never arrive together, so
/// every one costs the gateway its own wake-up. A simulator that sent many straps'
/// notifications at the same instant would let one wake-up serve many and make the
/// gateway look cheaper than it is in a gym. The mean interval stays `1 / rate`, so
/// rates and counts are as configured; the variation is a slow breathing-like swing
/// (±4 % over about 4 s) plus beat-to-beat noise (3 %), bounded to ±15 %.
public struct ArrivalClock: Sendable {
    public private(set) var rate: Double
    private var rng: SeededRandom
    private var swingPhase: Double
    private var elapsed = 0.0

    /// `seed`: the strap's own (a link's epoch mixed in gives a new phase per link).
    public init(rate: Double, seed: SeededRandom) {
        self.rate = rate
        rng = seed
        swingPhase = rng.unit() * 2 * Double.pi
    }

    /// Seconds from the start of the link to the first notification: uniform over one
    /// interval, so that straps linked at the same moment still notify apart.
    public mutating func phase() -> Double {
        rng.unit() / rate
    }

    /// Seconds to the next notification after one that just left.
    public mutating func nextInterval() -> Double {
        let period = 1 / rate
        let swing = 0.04 * sin(2 * Double.pi * elapsed / 4 + swingPhase)
        let noise = max(-0.11, min(0.11, 0.03 * rng.gaussian()))
        let interval = period * (1 + swing + noise)
        elapsed += interval
        return interval
    }

    /// A new rate (SetRate, a flood): the next interval follows it.
    public mutating func setRate(_ r: Double) {
        rate = r
    }
}
