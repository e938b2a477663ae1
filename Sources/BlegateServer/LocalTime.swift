// SPDX-License-Identifier: MIT
import Timing
import TimeZoneFiles

/// Times on the staff page in the gym's own zone (`serve --time-zone`), as the staff read
/// a timetable: `2026-11-28 18:05`. The zone comes from tzdata's files, not ICU.
struct LocalTime: Sendable {
    let zone: TimeZoneFile

    func text(_ unixSeconds: Double) -> String {
        let s = Int64(unixSeconds.rounded(.down))
        let local = s + Int64(zone.offset(at: s))
        let days = CivilDays.days(seconds: local)
        let (y, m, d) = CivilDays.date(days: days)
        let minutes = (local - days * 86_400) / 60
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(y)-\(two(Int64(m)))-\(two(Int64(d))) \(two(minutes / 60)):\(two(minutes % 60))"
    }
}
