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
    /// Straps waiting for a link (tiles or not), and those past the screen's room.
    var waiting: Int = 0
    var waitingHidden: Int?

    struct RunningClass: Encodable {
        var name: String
        /// Seconds since the class started.
        var elapsed: Int64
        /// The planned length in seconds, when one was given.
        var length: Int?
    }

    /// The last class's summary, shown for `WallBoard.summarySeconds` after it ends: the
    /// page fetches `/summary` (drawn once) when `number` changes, so frames stay small.
    struct Summary: Encodable {
        var name: String
        var number: Int
        var count: Int
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
        /// The tile's record time, Unix ms (0 for a strap waiting for a link).
        var t: Int64
        /// Why a waiting strap has no link yet.
        var why: String?
    }

    /// Nil fields are left out, as the page expects.
    static let encoder = JSONEncoder()
}
