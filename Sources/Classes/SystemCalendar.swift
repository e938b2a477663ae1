// SPDX-License-Identifier: MIT
import Foundation

/// Local days from a time zone (the system's by default): a class at 07:00 starts at
/// 07:00 on the gym's clock, across daylight-saving changes.
public struct SystemCalendar: LocalCalendar {
    private let calendar: Calendar

    public init(timeZone: TimeZone = .current) {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        calendar = c
    }

    public func day(of ms: Int64) -> LocalDay {
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: date)
        // Foundation: 1 = Sunday … 7 = Saturday.
        let weekday = ScheduledClass.Weekday(rawValue: ((parts.weekday! + 5) % 7) + 1)!
        return LocalDay(year: parts.year!, month: parts.month!, day: parts.day!, weekday: weekday)
    }

    public func day(before d: LocalDay) -> LocalDay {
        let noon = instant(day: d, secondsOfDay: 12 * 3600)
        return day(of: noon - 86_400_000)
    }

    public func instant(day d: LocalDay, secondsOfDay: Int) -> Int64 {
        let parts = DateComponents(year: d.year, month: d.month, day: d.day, hour: secondsOfDay / 3600,
                                   minute: secondsOfDay % 3600 / 60, second: secondsOfDay % 60)
        let date = calendar.date(from: parts) ?? Date(timeIntervalSince1970: 0)
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
