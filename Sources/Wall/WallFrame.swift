// SPDX-License-Identifier: MIT
import FoundationEssentials

/// One frame for the screens, as the page's `apply(frame)` reads it (docs/wall.md). Built
/// once per tick and written to every screen on `/events`.
struct WallFrame: Encodable {
    var seq: Int
    var gym: String
    var `class`: RunningClass?
    var summary: Summary?
    var tiles: [Tile]

    struct RunningClass: Encodable {
        var name: String
        /// Seconds since the class started.
        var elapsed: Int64
        /// The planned length in seconds, when one was given.
        var length: Int?
    }

    /// The last class's points and minutes per zone, shown for a minute after it ends.
    struct Summary: Encodable {
        var name: String
        var rows: [SummaryRow]
    }

    struct SummaryRow: Encodable {
        var id: String
        var name: String
        var pts: Int
        /// Whole minutes in zones 0 to 5.
        var min: [Int]
    }

    struct Tile: Encodable {
        var id: String
        var slot: Int
        var name: String
        /// The short id staff pair a new strap by; only for straps nobody has yet.
        var short: String?
        var hr: Int
        var pct: Int
        var zone: Int
        /// The maximum heart rate is an estimate (no age or maximum known).
        var est: Bool
        var pts: Int
        var kcal: Int?
        /// Present (true) when the strap's battery is at or below the wall's threshold.
        var low: Bool?
        var state: String
        /// The tile's record time, Unix ms.
        var t: Int64
    }

    /// Nil fields are left out, as the page expects.
    static let encoder = JSONEncoder()
}
