// SPDX-License-Identifier: MIT

/// A `[[classes]]` entry: a class that runs on given weekdays at a local time.
public struct ScheduledClass: Sendable, Equatable {
    public enum Weekday: Int, Sendable, Equatable, CaseIterable, Comparable {
        case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

        /// `mon`, `tue`, … (what the configuration accepts).
        public static func parse(_ text: String) -> Weekday? {
            let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
            let lower = text.lowercased()
            guard lower.count >= 3, let i = names.firstIndex(where: { lower.hasPrefix($0) }) else { return nil }
            let full = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"][i]
            return full.hasPrefix(lower) ? Weekday(rawValue: i + 1) : nil
        }

        public static func < (a: Weekday, b: Weekday) -> Bool { a.rawValue < b.rawValue }
    }

    public var name: String
    public var type: ClassType
    public var days: Set<Weekday>
    /// Minutes after local midnight.
    public var startMinute: Int
    public var durationSeconds: Int

    public init(name: String, type: ClassType, days: Set<Weekday>, startMinute: Int, durationSeconds: Int) {
        self.name = name
        self.type = type
        self.days = days
        self.startMinute = startMinute
        self.durationSeconds = durationSeconds
    }

    /// The occurrence that contains `ms`, if any: it may have started the local day before
    /// (a class across midnight).
    public func occurrence(containing ms: Int64, in calendar: LocalCalendar) -> (startMs: Int64, endMs: Int64)? {
        let today = calendar.day(of: ms)
        for day in [today, calendar.day(before: today)] where days.contains(day.weekday) {
            let start = calendar.instant(day: day, secondsOfDay: startMinute * 60)
            let end = start + Int64(durationSeconds) * 1000
            if ms >= start, ms < end { return (start, end) }
        }
        return nil
    }

    /// The key of the occurrence starting at `startMs`: the same after a restart.
    public func key(startMs: Int64) -> String { "scheduled/\(name)/\(startMs)" }
}

/// Local days and times, from the system's time zone (or a fixed one in tests), so the
/// schedule needs no clock of its own.
public protocol LocalCalendar: Sendable {
    /// The local day containing `ms`.
    func day(of ms: Int64) -> LocalDay
    func day(before day: LocalDay) -> LocalDay
    /// The Unix milliseconds of a local time on a local day.
    func instant(day: LocalDay, secondsOfDay: Int) -> Int64
}

public struct LocalDay: Sendable, Equatable, Hashable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var weekday: ScheduledClass.Weekday

    public init(year: Int, month: Int, day: Int, weekday: ScheduledClass.Weekday) {
        self.year = year
        self.month = month
        self.day = day
        self.weekday = weekday
    }
}
