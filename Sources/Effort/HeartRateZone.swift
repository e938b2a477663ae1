// SPDX-License-Identifier: MIT

/// Training zones 0 to 5: 0 below the first boundary, 5 at or above the last.
///
/// By default a zone is a share of the maximum (50, 60, 70, 80, 90 %: the five-zone
/// scheme of Polar and Myzone). With a resting heart rate, the same shares apply to the
/// heart-rate reserve (Karvonen, Kentala & Mustala 1957): target = rest + share ×
/// (max − rest), which places a fit member with a low resting rate fairly.
public enum HeartRateZone {
    public static let boundaries: [Double] = [0.50, 0.60, 0.70, 0.80, 0.90]

    /// The intensity a heart rate stands for: its share of the maximum, or of the
    /// reserve when `resting` is known (below `max`).
    public static func intensity(hr: Double, max: Double, resting: Double? = nil) -> Double {
        if let r = resting, r < max {
            return (hr - r) / (max - r)
        }
        return hr / max
    }

    /// The heart rate at which `share` of the maximum (or reserve) is reached.
    public static func target(share: Double, max: Double, resting: Double? = nil) -> Double {
        if let r = resting, r < max { return r + share * (max - r) }
        return share * max
    }

    public static func zone(intensity: Double) -> Int {
        boundaries.lastIndex { intensity >= $0 }.map { $0 + 1 } ?? 0
    }

    public static func zone(hr: Double, max: Double, resting: Double? = nil) -> Int {
        zone(intensity: intensity(hr: hr, max: max, resting: resting))
    }
}
