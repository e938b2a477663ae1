// SPDX-License-Identifier: MIT
import Classes
import Foundation
import Testing

/// ZoneCalendar (tzdata's files, read without Foundation) against Foundation's Calendar
/// (ICU's own zone data) on the same instants and local times: zones with daylight time
/// north and south, half-hour offsets and none, in the years the files list and past
/// 2037, where only the files' rules apply.
@Suite struct ZoneCalendarTests {
    static let zones = ["Europe/Madrid", "America/New_York", "Australia/Lord_Howe", "Australia/Adelaide",
                        "Asia/Kolkata", "America/Sao_Paulo", "Europe/Dublin", "Etc/UTC"]

    static func foundation(_ zone: String) -> Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: zone)!
        return c
    }

    @Test(arguments: zones) func localDaysMatchFoundation(zone: String) throws {
        let ours = try ZoneCalendar(file: zone)
        let theirs = Self.foundation(zone)
        var checked = 0
        for (from, to) in [(2020, 2028), (2039, 2041)] {
            let start = Int64(theirs.date(from: DateComponents(year: from, month: 1, day: 1))!.timeIntervalSince1970) * 1000
            let end = Int64(theirs.date(from: DateComponents(year: to, month: 1, day: 1))!.timeIntervalSince1970) * 1000
            // Every 7 h 13 min 7 s: every hour of the day, on every weekday, over the years.
            var ms = start
            while ms < end {
                let p = theirs.dateComponents([.year, .month, .day, .weekday], from: Date(timeIntervalSince1970: Double(ms) / 1000))
                let d = ours.day(of: ms)
                #expect(d.year == p.year && d.month == p.month && d.day == p.day, "\(zone) at \(ms)")
                #expect(d.weekday.rawValue == (p.weekday! + 5) % 7 + 1, "\(zone) at \(ms)")
                #expect(ours.offsetSeconds(at: ms) == theirs.timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000)))
                ms += 25_987_000
                checked += 1
            }
        }
        #expect(checked > 10_000)
    }

    @Test(arguments: zones) func localTimesMatchFoundationAcrossDaylightChanges(zone: String) throws {
        let ours = try ZoneCalendar(file: zone)
        let theirs = Self.foundation(zone)
        for year in [2025, 2026, 2040] {
            for month in 1...12 {
                for day in 1...28 {
                    // Around 00:00, 02:00 and 03:00, where clocks change, and a class time.
                    for seconds in [0, 1800, 5400, 7200, 9000, 10800, 12600, 25200, 86399] {
                        let local = LocalDay(year: year, month: month, day: day, weekday: .monday)
                        let expected = theirs.date(from: DateComponents(year: year, month: month, day: day, hour: seconds / 3600,
                                                                        minute: seconds % 3600 / 60, second: seconds % 60))!
                        #expect(ours.instant(day: local, secondsOfDay: seconds) == Int64(expected.timeIntervalSince1970) * 1000,
                                "\(zone) \(year)-\(month)-\(day) +\(seconds) s")
                    }
                }
            }
        }
    }

    @Test func dayBeforeCrossesMonthsYearsAndLeapDays() throws {
        let utc = ZoneCalendar.utc
        let march1 = utc.day(of: Int64(Date(timeIntervalSince1970: 1_709_251_200).timeIntervalSince1970) * 1000)  // 2024-03-01
        #expect(march1 == LocalDay(year: 2024, month: 3, day: 1, weekday: .friday))
        #expect(utc.day(before: march1) == LocalDay(year: 2024, month: 2, day: 29, weekday: .thursday))
        #expect(utc.day(before: LocalDay(year: 2026, month: 1, day: 1, weekday: .thursday))
                == LocalDay(year: 2025, month: 12, day: 31, weekday: .wednesday))
        #expect(utc.day(of: -1) == LocalDay(year: 1969, month: 12, day: 31, weekday: .wednesday))
    }

    @Test func systemZoneFollowsTZAsNameFileOrRule() throws {
        let madrid = try ZoneCalendar(file: "Europe/Madrid")
        let summer2026: Int64 = 1_782_000_000_000, winter2045: Int64 = 2_367_000_000_000, summer2045: Int64 = 2_382_000_000_000
        for tz in ["Europe/Madrid", ":/usr/share/zoneinfo/Europe/Madrid", "CET-1CEST,M3.5.0,M10.5.0/3"] {
            let zone = ZoneCalendar.system(environment: tz)
            for t in [summer2026, winter2045, summer2045] {
                #expect(zone.offsetSeconds(at: t) == madrid.offsetSeconds(at: t), "TZ=\(tz) at \(t)")
            }
        }
        #expect(madrid.offsetSeconds(at: summer2045) == 7200 && madrid.offsetSeconds(at: winter2045) == 3600)
        // A southern rule: daylight time across the new year (Adelaide, +9:30 / +10:30).
        let adelaide = ZoneCalendar.system(environment: "ACST-9:30ACDT,M10.1.0,M4.1.0/3")
        #expect(adelaide.offsetSeconds(at: 2_366_000_000_000) == 37_800)  // January 2045
        #expect(adelaide.offsetSeconds(at: 2_382_000_000_000) == 34_200)  // June 2045
        // A TZ that names nothing: /etc/localtime, or UTC without it.
        let fallback = (try? ZoneCalendar(file: "/etc/localtime")) ?? .utc
        #expect(ZoneCalendar.system(environment: "No/Such_Zone").offsetSeconds(at: summer2026) == fallback.offsetSeconds(at: summer2026))
    }

    @Test func malformedFilesAreRefusedWithAReason() throws {
        let error = #expect(throws: ZoneCalendar.FileError.self) { try ZoneCalendar(tzif: Array("not a zone".utf8)) }
        #expect(error?.description.contains("not a TZif file") == true)
        let real = try Array(Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Madrid")))
        #expect(throws: ZoneCalendar.FileError.self) { try ZoneCalendar(tzif: Array(real.prefix(200))) }
        #expect(throws: ZoneCalendar.FileError.self) { try ZoneCalendar(file: "/nonexistent/zone") }
    }
}

/// Times for people: local ISO 8601 with the offset, never Unix numbers.
@Suite struct LocalISO8601Tests {
    @Test func localTimesCarryTheirOffset() throws {
        let madrid = try ZoneCalendar(file: "Europe/Madrid")
        // 2026-11-28T17:05:12.900Z: winter time, +01:00; the milliseconds are dropped.
        #expect(madrid.iso8601(millisecondsSince1970: 1_795_885_512_900) == "2026-11-28T18:05:12+01:00")
        // 2026-07-01T00:00:00Z: summer time, +02:00.
        #expect(madrid.iso8601(millisecondsSince1970: 1_782_864_000_000) == "2026-07-01T02:00:00+02:00")
        // Half an hour behind, across midnight: 2026-11-28T02:00:00Z in St John's.
        let stJohns = try ZoneCalendar(file: "America/St_Johns")
        #expect(stJohns.iso8601(millisecondsSince1970: 1_795_831_200_000) == "2026-11-27T22:30:00-03:30")
        #expect(ZoneCalendar.utc.iso8601(millisecondsSince1970: -1) == "1969-12-31T23:59:59+00:00")
    }

    @Test func aRunningClassIsNamedWithItsLocalStart() throws {
        var book = ClassBook()
        let start: Int64 = 1_795_885_512_900
        _ = try book.start(name: "Spin", type: .cycle, at: start)
        do {
            _ = try book.start(name: "Other", type: .run, at: start + 60_000)
            Issue.record("a second class started")
        } catch {
            let text = error.description
            #expect(!text.contains("\(start)") && !text.contains("\(start / 1000)"), "\(text)")
            #expect(text.contains(ZoneCalendar.system().iso8601(millisecondsSince1970: start)), "\(text)")
        }
    }
}
