// SPDX-License-Identifier: MIT

/// A maximum heart rate and whether it is only an estimate (the page marks estimates,
/// so nobody reads "92 %" of a guessed maximum as a measurement).
public struct MaxHeartRate: Sendable, Equatable {
    public var bpm: Int
    public var estimated: Bool

    public init(bpm: Int, estimated: Bool) {
        self.bpm = bpm
        self.estimated = estimated
    }

    /// Tanaka, Monahan & Seals (2001): HRmax = 208 − 0.7 × age, from a meta-analysis of
    /// 351 studies and a laboratory study; less biased above 40 than 220 − age.
    public static func tanaka(age: Int) -> Double {
        208 - 0.7 * Double(age)
    }

    /// The configured maximum when there is one, else Tanaka's estimate from the age,
    /// else nil (no zone, no percentage: a default age would mislabel everyone).
    public static func of(_ profile: MemberProfile) -> MaxHeartRate? {
        if let m = profile.maxHR { return MaxHeartRate(bpm: m, estimated: false) }
        if let a = profile.age { return MaxHeartRate(bpm: Int(tanaka(age: a).rounded()), estimated: true) }
        return nil
    }
}

/// Raises a member's maximum when they hold a higher heart rate for a while (Myzone's
/// rule: 30 s), since a sustained value above the maximum proves the maximum too low.
/// The new maximum is the lowest value of that sustained run, not its peak, so one
/// spurious beat cannot inflate it.
public struct MaxHeartRateLearner: Sendable, Equatable {
    public static let defaultHold = 30.0

    public private(set) var maximum: Int
    let hold: Double
    /// Start of the current run above `maximum`, and its lowest value.
    var runStart: Double?
    var runLow = Int.max

    public init(maximum: Int, hold: Double = MaxHeartRateLearner.defaultHold) {
        self.maximum = maximum
        self.hold = hold
    }

    /// Feeds one heart rate at `time` (seconds, any monotonic origin); returns the new
    /// maximum when this sample raised it.
    public mutating func observe(hr: Int, at time: Double) -> Int? {
        guard hr > maximum else {
            runStart = nil
            runLow = .max
            return nil
        }
        if runStart == nil { runStart = time }
        runLow = min(runLow, hr)
        guard let start = runStart, time - start >= hold else { return nil }
        maximum = runLow
        runStart = nil
        runLow = .max
        return maximum
    }
}
