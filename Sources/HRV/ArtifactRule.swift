// SPDX-License-Identifier: MIT

/// What the artifact rule decided about one beat.
public enum BeatClass: String, Sendable, Equatable {
    case normal
    /// Outside the physiological range filter (default 300–2000 ms).
    case outOfRange = "out_of_range"
    /// More than the threshold below the local median: premature (ectopic) beat or half
    /// of a split interval (extra beat).
    case short
    /// More than the threshold above the local median: compensatory pause or a missed
    /// beat (two intervals merged into one).
    case long

    public var isArtifact: Bool { self != .normal }
}

/// The local-median rule ("median20"): a beat is an artifact when it deviates from the
/// median of the surrounding raw beats by more than `threshold` (20 %) of that median.
///
/// Why this rule: it is the rule the reference recommends for a port (§6.4); it needs no
/// global statistics, so a streaming engine can classify each beat once `halfWidth`
/// later beats have arrived; and because the median ignores up to `halfWidth` outliers
/// in its window, an ectopic pair (short + compensatory long) or a split interval
/// (two halves) cannot drag the reference value towards itself, unlike Malik's
/// previous-beat rule. Flagged beats are *deleted* and no successive difference is
/// formed across a deletion, which keeps RMSSD and pNN50 free of the huge differences an
/// artifact creates; interpolation would invent intervals that were never measured.
public struct LocalMedianArtifactRule: Sendable, Equatable {
    /// Beats on each side of the beat under test (5 → an 11-beat window).
    public var halfWidth: Int
    /// Relative deviation from the local median that marks an artifact (0.20).
    public var threshold: Double
    /// Physiological range filter in ms (reference: 300–2000 ms = 200–30 bpm).
    public var range: ClosedRange<Double>

    public init(halfWidth: Int = 5, threshold: Double = 0.20, range: ClosedRange<Double> = 300...2000) {
        self.halfWidth = max(1, halfWidth)
        self.threshold = threshold
        self.range = range
    }

    public static let median20 = LocalMedianArtifactRule()

    /// `meta.hrv_method` value.
    public var methodName: String {
        threshold == 0.20 && halfWidth == 5 ? "median20" : "median\(Int((threshold * 100).rounded()))w\(2 * halfWidth + 1)"
    }

    /// Classifies `window[center]` against the median of the in-range values of `window`
    /// (the beat itself included, like a median filter). `window` holds the raw beats of
    /// the same segment around the beat, clipped at segment edges.
    public func classify(_ window: UnsafeBufferPointer<Double>, center: Int) -> BeatClass {
        let rr = window[center]
        guard range.contains(rr) else { return .outOfRange }
        guard let median = LocalMedianArtifactRule.median(of: window, in: range) else { return .normal }
        if rr < median * (1 - threshold) { return .short }
        if rr > median * (1 + threshold) { return .long }
        return .normal
    }

    /// Median of the in-range values, computed on the stack (no allocation per beat).
    static func median(of values: UnsafeBufferPointer<Double>, in range: ClosedRange<Double>) -> Double? {
        withUnsafeTemporaryAllocation(of: Double.self, capacity: values.count) { scratch -> Double? in
            var n = 0
            for v in values where range.contains(v) {
                // Insertion sort: at most 11 elements.
                var j = n
                while j > 0, scratch[j - 1] > v {
                    scratch[j] = scratch[j - 1]
                    j -= 1
                }
                scratch[j] = v
                n += 1
            }
            guard n > 0 else { return nil }
            return n % 2 == 1 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2
        }
    }
}
