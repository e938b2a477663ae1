// SPDX-License-Identifier: MIT

/// Whether the wearer is exercising. HRV during exercise mostly reflects intensity and
/// breathing, so consumers must be able to tell it from resting HRV.
public enum HRVContext: String, Sendable, Equatable {
    case unknown
    case rest
    case exercise
}

/// Minimum-data rules (reference §6.3). A window that fails them still carries its
/// numbers (for diagnostics) but `meetsMinimumData` is false and the normalizer does
/// not report it as a metric by default.
public struct HRVQualityRules: Sendable, Equatable {
    /// NN intervals required per minute of window (40 → 40 for 60 s, 200 for 5 min).
    public var minimumNNPerMinute: Double
    /// Σ raw RR ÷ window length; below it the window is mostly empty (warm-up, gaps).
    public var minimumCoverage: Double
    /// Largest acceptable share of artifacts among the beats in the window.
    public var maximumArtifactFraction: Double

    public init(minimumNNPerMinute: Double = 40, minimumCoverage: Double = 0.9, maximumArtifactFraction: Double = 0.05) {
        self.minimumNNPerMinute = minimumNNPerMinute
        self.minimumCoverage = minimumCoverage
        self.maximumArtifactFraction = maximumArtifactFraction
    }
}

public struct HRVEngineConfiguration: Sendable, Equatable {
    /// RMSSD, mean NN and mean HR window, seconds (default 60).
    public var rmssdWindow: Double
    /// SDNN, pNN50, SD1/SD2 window, seconds (default 300, the Task Force short-term length).
    public var sdnnWindow: Double
    /// Emission period, seconds (like Synheart's `streamHRV(window:)` cadence).
    public var emitEvery: Double
    public var artifactRule: LocalMedianArtifactRule
    public var quality: HRVQualityRules
    /// Receipt-time jitter tolerated before a gap is declared, seconds. Straps notify at
    /// about 1 Hz, so the newest beat can be up to one notification period old.
    public var gapJitterAllowance: Double
    /// Extra drift, in mean RR intervals, that marks lost beats (reference: ~0.7).
    public var gapDriftFactor: Double

    public init(rmssdWindow: Double = 60, sdnnWindow: Double = 300, emitEvery: Double = 5,
                artifactRule: LocalMedianArtifactRule = .median20, quality: HRVQualityRules = HRVQualityRules(),
                gapJitterAllowance: Double = 1.0, gapDriftFactor: Double = 0.7) {
        self.rmssdWindow = rmssdWindow
        self.sdnnWindow = sdnnWindow
        self.emitEvery = emitEvery
        self.artifactRule = artifactRule
        self.quality = quality
        self.gapJitterAllowance = gapJitterAllowance
        self.gapDriftFactor = gapDriftFactor
    }
}
