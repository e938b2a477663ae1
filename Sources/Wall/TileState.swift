// SPDX-License-Identifier: MIT

/// The state of a tile's data, from the age of its last heart rate and how it came.
public enum TileState: String, Sendable {
    /// A heart rate from a connected strap within `freshFor`.
    case live
    /// A heart rate read from the strap's advertisements (no link) within `freshFor`.
    case advertised
    /// Nothing for longer than `freshFor`: the last value, greyed.
    case stale
    /// Nothing for longer than `goneAfter`: shown as gone, then removed.
    case gone

    public static let freshFor = 5.0
    public static let goneAfter = 60.0
    /// How long a gone tile stays before its place is freed.
    public static let removeAfter = 70.0

    /// nil once the tile should be removed.
    public static func of(age: Double, advertised: Bool) -> TileState? {
        if age <= freshFor { return advertised ? .advertised : .live }
        if age <= goneAfter { return .stale }
        if age <= removeAfter { return .gone }
        return nil
    }
}
