// SPDX-License-Identifier: MIT

/// The version strings a workout carries in `formulas`, so a backend can tell which maths
/// produced a figure and recompute or discard it when a formula changes. A string changes
/// (`/v2`) whenever the same input would give a different number.
public struct WorkoutFormulas: Sendable, Equatable, Codable {
    /// Zones as shares of the maximum heart rate: 50, 60, 70, 80, 90 %.
    public static let zonesPercentOfMax = "pct-max-50-60-70-80-90/v1"
    /// Zones as the same shares of the heart-rate reserve (Karvonen), used when the
    /// member's resting heart rate is known.
    public static let zonesKarvonen = "karvonen/v1"
    /// Keytel et al. (2005) without VO2max, summed per second of the workout.
    public static let kcalKeytel = "keytel-2005/v1"
    /// `EffortPoints`: zone number per minute, zone 5 counting as 4.
    public static let pointsBlegate = "blegate-points/v1"

    public var zones: String
    public var kcal: String
    public var points: String

    public init(zones: String, kcal: String = WorkoutFormulas.kcalKeytel, points: String = WorkoutFormulas.pointsBlegate) {
        self.zones = zones
        self.kcal = kcal
        self.points = points
    }
}
