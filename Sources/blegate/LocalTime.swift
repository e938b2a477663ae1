// SPDX-License-Identifier: MIT
import Classes
import WearMetrics

/// Times for people: local ISO 8601 with the UTC offset, to the second
/// (`2026-11-28T18:05:12+01:00`), in the machine's time zone. JSON keeps UTC.
enum LocalTime {
    static let zone = ZoneCalendar.system()

    static func text(_ t: UTCTimestamp) -> String {
        zone.iso8601(millisecondsSince1970: t.millisecondsSince1970)
    }

    /// An ISO 8601 UTC time from a report, in local time; text that is not one as it is.
    static func text(iso: String) -> String {
        UTCTimestamp(iso8601: iso).map(text) ?? iso
    }
}
