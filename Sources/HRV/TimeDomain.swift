// SPDX-License-Identifier: MIT

#if canImport(Glibc)
// Only for libm (sqrt, round) to be linked into executables that import no other C module.
import Glibc
#endif

/// Time-domain HRV of a set of NN intervals.
///
/// Conventions (reference §6.2): SDNN and the SD1/SD2 variances use ddof = 1 (as
/// hrv-analysis and neurokit2); RMSSD = sqrt(mean(ΔNN²)); pNN50 divides NN50 by the
/// number of *valid successive differences* (hrv-analysis divides by N − 1, which is the
/// same number on a continuous series; neurokit2 divides by N). A difference is valid only
/// between two accepted beats that were adjacent in the raw stream, so a deleted artifact
/// or a disconnect never creates a fake difference.
public struct HRVTimeDomain: Sendable, Equatable {
    /// Number of NN intervals.
    public var nnCount: Int
    /// Number of valid successive differences.
    public var differenceCount: Int
    public var meanNN: Double
    /// ms, ddof 1; nil below 2 intervals.
    public var sdnn: Double?
    /// ms; nil without a valid difference.
    public var rmssd: Double?
    /// Count of |ΔNN| > 50 ms (strictly greater).
    public var nn50: Int
    /// %, NN50 ÷ valid differences.
    public var pnn50: Double?
    /// 60000 / mean NN (bpm): blegate's mean HR.
    public var meanHR: Double
    /// mean(60000 / NNᵢ), hrv-analysis' `mean_hr` (always ≥ `meanHR`).
    public var meanInstantaneousHR: Double
    /// Standard deviation of ΔNN, ddof 1.
    public var sdsd: Double?
    /// sqrt(½ Var(ΔNN)) (hrv-analysis' formula).
    public var sd1: Double?
    /// sqrt(2 SDNN² − ½ Var(ΔNN)).
    public var sd2: Double?
}

/// Streaming accumulator: Welford's update keeps SDNN accurate without a second pass.
public struct TimeDomainAccumulator: Sendable {
    private(set) var count = 0
    private var mean = 0.0
    private var m2 = 0.0
    private var inverseSum = 0.0
    private var diffCount = 0
    private var diffMean = 0.0
    private var diffM2 = 0.0
    private var diffSquares = 0.0
    private var nn50 = 0
    private var previous: Double?

    public init() {}

    /// Adds one NN interval. `continuesPrevious` is false after a deleted beat, a gap or
    /// at the start, so no successive difference is formed across it.
    @inline(__always)
    public mutating func add(_ nn: Double, continuesPrevious: Bool) {
        count += 1
        let delta = nn - mean
        mean += delta / Double(count)
        m2 += delta * (nn - mean)
        inverseSum += 60000 / nn
        if continuesPrevious, let p = previous {
            let d = nn - p
            diffCount += 1
            let dd = d - diffMean
            diffMean += dd / Double(diffCount)
            diffM2 += dd * (d - diffMean)
            diffSquares += d * d
            if abs(d) > 50 { nn50 += 1 }
        }
        previous = nn
    }

    /// Marks a break: the next interval starts a new chain of differences.
    public mutating func breakChain() { previous = nil }

    public var result: HRVTimeDomain? {
        guard count > 0 else { return nil }
        let variance: Double? = count > 1 ? m2 / Double(count - 1) : nil
        let diffVariance: Double? = diffCount > 1 ? diffM2 / Double(diffCount - 1) : nil
        var sd2: Double?
        if let v = variance, let dv = diffVariance { sd2 = max(0, 2 * v - 0.5 * dv).squareRoot() }
        return HRVTimeDomain(
            nnCount: count,
            differenceCount: diffCount,
            meanNN: mean,
            sdnn: variance.map { $0.squareRoot() },
            rmssd: diffCount > 0 ? (diffSquares / Double(diffCount)).squareRoot() : nil,
            nn50: nn50,
            pnn50: diffCount > 0 ? 100 * Double(nn50) / Double(diffCount) : nil,
            meanHR: 60000 / mean,
            meanInstantaneousHR: inverseSum / Double(count),
            sdsd: diffVariance.map { $0.squareRoot() },
            sd1: diffVariance.map { ($0 * 0.5).squareRoot() },
            sd2: sd2
        )
    }
}

extension HRVTimeDomain {
    /// Time-domain values of one continuous series with no artifacts removed.
    public static func compute<S: Sequence<Double>>(_ nn: S) -> HRVTimeDomain? {
        var acc = TimeDomainAccumulator()
        for v in nn { acc.add(v, continuesPrevious: true) }
        return acc.result
    }
}
