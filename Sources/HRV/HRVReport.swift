// SPDX-License-Identifier: MIT

/// HRV over one window, with the quality figures that go into `meta`.
public struct HRVWindowResult: Sendable, Equatable {
    /// Nominal window length, seconds.
    public var windowSeconds: Double
    /// Raw beats (accepted and rejected) whose end falls inside the window.
    public var beatCount: Int
    public var artifactCount: Int
    /// 100 × artifacts ÷ beats (0 for an empty window).
    public var artifactPercent: Double
    /// Σ raw RR ÷ window length.
    public var coverage: Double
    /// nil when the window has no accepted beat.
    public var timeDomain: HRVTimeDomain?
    public var meetsMinimumData: Bool

    public var nnCount: Int { timeDomain?.nnCount ?? 0 }
}

/// One scheduled HRV emission for a device.
public struct HRVReport: Sendable, Equatable {
    public var deviceID: String
    /// Window end, seconds since the Unix epoch (the time passed in by the caller).
    public var time: Double
    /// The RMSSD window (RMSSD, mean NN, mean HR).
    public var short: HRVWindowResult
    /// The SDNN window (SDNN, pNN50, SD1, SD2).
    public var long: HRVWindowResult
    public var context: HRVContext
    /// `meta.hrv_method`, e.g. `median20`.
    public var method: String
}
