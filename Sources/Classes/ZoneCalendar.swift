// SPDX-License-Identifier: MIT
import TimeZoneFiles
import Timing

/// Local days from a time zone file (the system's by default): a class at 07:00 starts at
/// 07:00 on the gym's clock, across daylight-saving changes.
public struct ZoneCalendar: LocalCalendar {
    private let zone: TimeZoneFile

    /// UTC: no offset, no daylight time.
    public static let utc = ZoneCalendar(zone: .utc)

    public typealias FileError = TimeZoneFile.FileError

    public init(zone: TimeZoneFile) {
        self.zone = zone
    }

    /// A zone from the bytes of its TZif file (`/usr/share/zoneinfo/Europe/Madrid`).
    public init(tzif bytes: [UInt8]) throws(FileError) {
        zone = try TimeZoneFile(tzif: bytes)
    }

    /// A zone by its file, or by its name under /usr/share/zoneinfo.
    public init(file: String) throws(FileError) {
        zone = try TimeZoneFile(file: file)
    }

    /// The system's zone as the C library finds it (`TimeZoneFile.system`).
    public static func system(environment tz: String? = TimeZoneFile.environmentTZ()) -> ZoneCalendar {
        ZoneCalendar(zone: .system(environment: tz))
    }

    /// An instant as local ISO 8601 with its offset, for people (`2026-11-28T18:05:12+01:00`).
    public func iso8601(millisecondsSince1970 ms: Int64) -> String {
        zone.iso8601(millisecondsSince1970: ms)
    }

    /// The UTC offset in seconds at a Unix instant (ms).
    public func offsetSeconds(at ms: Int64) -> Int {
        Int(zone.offset(at: Self.floorSeconds(ms)))
    }

    public func day(of ms: Int64) -> LocalDay {
        let t = Self.floorSeconds(ms)
        let days = CivilDays.days(seconds: t + Int64(zone.offset(at: t)))
        let date = CivilDays.date(days: days)
        return LocalDay(year: date.year, month: date.month, day: date.day,
                        weekday: ScheduledClass.Weekday(rawValue: CivilDays.weekday(days: days))!)
    }

    public func day(before d: LocalDay) -> LocalDay {
        let days = CivilDays.days(year: d.year, month: d.month, day: d.day) - 1
        let date = CivilDays.date(days: days)
        return LocalDay(year: date.year, month: date.month, day: date.day,
                        weekday: ScheduledClass.Weekday(rawValue: CivilDays.weekday(days: days))!)
    }

    /// A local time that occurs twice (the hour repeated when clocks go back) is the
    /// first; one that does not occur (the hour skipped when they go forward) is read
    /// with the offset before the change, so 02:30 on a night that jumps from 02:00 to
    /// 03:00 is 03:30: what Foundation's Calendar gives.
    public func instant(day d: LocalDay, secondsOfDay: Int) -> Int64 {
        let local = CivilDays.days(year: d.year, month: d.month, day: d.day) * 86_400 + Int64(secondsOfDay)
        // The offsets in force a day either side cover every change near this time.
        let before = Int64(zone.offset(at: local - 86_400 - 50_400))
        let after = Int64(zone.offset(at: local + 86_400 + 50_400))
        var candidates: [Int64] = []
        for offset in Set([before, after]) {
            let t = local - offset
            if Int64(zone.offset(at: t)) == offset { candidates.append(t) }
        }
        let t = candidates.min() ?? (local - before)
        return t * 1000
    }

    private static func floorSeconds(_ ms: Int64) -> Int64 {
        ms >= 0 ? ms / 1000 : (ms - 999) / 1000
    }
}
