// SPDX-License-Identifier: MIT

/// Batch analysis of a recorded RR series, through the same `RRStream` the engine uses,
/// so `blegate hrv` and the tests see exactly what the gateway would emit.
public enum HRVAnalysis {
    public struct Result: Sendable, Equatable {
        public var window: HRVWindowResult
        /// Class of every input beat, in input order.
        public var classes: [BeatClass]
        public var method: String
    }

    /// Analyses `rrMilliseconds` (one continuous recording; beat times are the cumulative
    /// sum). `windowSeconds` nil = the whole series, else the last `windowSeconds`.
    /// `rule` nil = no artifact handling at all (not even the range filter).
    public static func analyze(rrMilliseconds: [Double], windowSeconds: Double? = nil,
                               rule: LocalMedianArtifactRule? = .median20,
                               quality: HRVQualityRules = HRVQualityRules()) -> Result {
        let effectiveRule = rule ?? LocalMedianArtifactRule(halfWidth: 1, threshold: .infinity, range: -Double.infinity...Double.infinity)
        var stream = RRStream(rule: effectiveRule, retention: .infinity)
        var t = 0.0
        for rr in rrMilliseconds {
            t += rr / 1000
            stream.appendBeat(rr, time: t)
        }
        let total = t
        let seconds = windowSeconds ?? total
        let window = stream.window(seconds: windowSeconds == nil ? total + 1 : seconds, endingAt: total, quality: quality)
        var result = window
        if windowSeconds == nil {
            // The whole series is the window: report its true length and full coverage.
            result.windowSeconds = total
            result.coverage = total > 0 ? 1 : 0
            let nn = Double(result.nnCount)
            result.meetsMinimumData = nn >= quality.minimumNNPerMinute * total / 60
                && result.artifactPercent <= 100 * quality.maximumArtifactFraction
                && result.timeDomain?.rmssd != nil
        }
        return Result(window: result, classes: stream.classes, method: rule?.methodName ?? "none")
    }
}
