// SPDX-License-Identifier: MIT

/// A member's running totals over a stretch of time (a class), fed one heart rate at a
/// time. Each sample counts for the time since the previous one, capped so that a gap
/// in the data (strap out of range) is not filled with made-up effort.
public struct EffortTally: Sendable, Equatable {
    /// Longest interval one sample may stand for, in seconds.
    public static let maxStep = 5.0

    public private(set) var kcal: Double?
    public private(set) var points = 0.0
    var lastTime: Double?

    public init() {}

    /// Adds the interval since the last sample at the given zone and rate (`kcalPerMinute`
    /// nil when it cannot be computed; the total stays nil then).
    public mutating func add(at time: Double, zone: Int?, kcalPerMinute: Double?) {
        defer { lastTime = time }
        guard let last = lastTime else { return }
        let step = min(max(time - last, 0), Self.maxStep)
        let minutes = step / 60
        if let zone { points += EffortPoints.perMinute(zone: zone) * minutes }
        if let k = kcalPerMinute { kcal = (kcal ?? 0) + k * minutes }
    }
}
