// SPDX-License-Identifier: MIT
import Timing

/// A POSIX `TZ` rule such as `CET-1CEST,M3.5.0,M10.5.0/3`: what a TZif footer gives for
/// instants after the file's last transition (POSIX.1-2017 8.3, with RFC 8536's
/// extensions: hours up to ±167 in the transition times).
struct PosixTimeZoneRule: Sendable, Equatable {
    /// UTC offsets, seconds east.
    var standard: Int32
    var daylight: Int32?
    var start: Transition?
    var end: Transition?

    struct Transition: Sendable, Equatable {
        enum Day: Sendable, Equatable {
            /// `Jn`: day 1…365, February 29 never counted.
            case julian(Int)
            /// `n`: day 0…365, February 29 counted.
            case zeroBased(Int)
            /// `Mm.w.d`: weekday d (0 = Sunday) of week w (5 = the last) of month m.
            case monthWeek(month: Int, week: Int, weekday: Int)
        }

        var day: Day
        /// Local time of day of the change, seconds (may be negative or past 24 h).
        var time: Int64

        /// Seconds since the epoch, in the local time in force before the change, of the
        /// change in `year`.
        func localSeconds(year: Int) -> Int64 {
            let jan1 = CivilDays.days(year: year, month: 1, day: 1)
            let dayNumber: Int64
            switch day {
            case let .julian(n):
                // Days after February count one more in a leap year.
                dayNumber = jan1 + Int64(n - 1) + (CivilDays.isLeap(year) && n >= 60 ? 1 : 0)
            case let .zeroBased(n):
                dayNumber = jan1 + Int64(n)
            case let .monthWeek(month, week, weekday):
                let first = CivilDays.days(year: year, month: month, day: 1)
                let firstWeekday = (CivilDays.weekday(days: first)) % 7  // 0 = Sunday
                var d = first + Int64((weekday - firstWeekday + 7) % 7) + Int64(week - 1) * 7
                let nextMonth = month == 12 ? CivilDays.days(year: year + 1, month: 1, day: 1)
                    : CivilDays.days(year: year, month: month + 1, day: 1)
                while d >= nextMonth { d -= 7 }
                dayNumber = d
            }
            return dayNumber * 86_400 + time
        }
    }

    /// Parses a rule; nil for text this reader does not understand.
    init?(_ text: String) {
        var p = Parser(chars: Array(text.utf8))
        guard p.name(), let std = p.offset() else { return nil }
        standard = Int32(-std)
        if p.atEnd {
            daylight = nil
            start = nil
            end = nil
            return
        }
        guard p.name() else { return nil }
        if let dst = p.offset() { daylight = Int32(-dst) } else { daylight = standard + 3600 }
        guard p.eat(","), let s = p.transition(), p.eat(","), let e = p.transition(), p.atEnd else { return nil }
        start = s
        end = e
    }

    /// The UTC offset at a Unix instant.
    func offset(at t: Int64) -> Int32 {
        guard let daylight, let start, let end else { return standard }
        let year = CivilDays.date(days: CivilDays.days(seconds: t + Int64(standard))).year
        // The change to daylight time is given in standard time, the change back in daylight time.
        let on = start.localSeconds(year: year) - Int64(standard)
        let off = end.localSeconds(year: year) - Int64(daylight)
        let inDaylight = on < off ? (t >= on && t < off) : !(t >= off && t < on)
        return inDaylight ? daylight : standard
    }

    private struct Parser {
        let chars: [UInt8]
        var at = 0

        var atEnd: Bool { at == chars.count }

        mutating func eat(_ c: Character) -> Bool {
            guard at < chars.count, chars[at] == c.asciiValue! else { return false }
            at += 1
            return true
        }

        /// `CET` or `<+0330>`.
        mutating func name() -> Bool {
            if eat("<") {
                while at < chars.count, chars[at] != UInt8(ascii: ">") { at += 1 }
                return eat(">")
            }
            let from = at
            while at < chars.count, (chars[at] | 0x20) >= UInt8(ascii: "a"), (chars[at] | 0x20) <= UInt8(ascii: "z") { at += 1 }
            return at - from >= 3
        }

        mutating func number() -> Int? {
            let from = at
            var n = 0
            while at < chars.count, chars[at] >= UInt8(ascii: "0"), chars[at] <= UInt8(ascii: "9") {
                n = n * 10 + Int(chars[at] - UInt8(ascii: "0"))
                at += 1
                if n > 100_000 { return nil }
            }
            return at > from ? n : nil
        }

        /// `[+-]hh[:mm[:ss]]` as seconds.
        mutating func offset() -> Int? {
            let save = at
            var sign = 1
            if eat("-") { sign = -1 } else { _ = eat("+") }
            guard let h = number(), h <= 167 else { at = save; return nil }
            var seconds = h * 3600
            if eat(":") {
                guard let m = number(), m < 60 else { at = save; return nil }
                seconds += m * 60
                if eat(":") {
                    guard let s = number(), s < 60 else { at = save; return nil }
                    seconds += s
                }
            }
            return sign * seconds
        }

        mutating func transition() -> Transition? {
            let day: Transition.Day
            if eat("M") {
                guard let m = number(), (1...12).contains(m), eat("."), let w = number(), (1...5).contains(w),
                      eat("."), let d = number(), (0...6).contains(d) else { return nil }
                day = .monthWeek(month: m, week: w, weekday: d)
            } else if eat("J") {
                guard let n = number(), (1...365).contains(n) else { return nil }
                day = .julian(n)
            } else {
                guard let n = number(), (0...365).contains(n) else { return nil }
                day = .zeroBased(n)
            }
            var time: Int64 = 7200
            if eat("/") {
                guard let t = offset() else { return nil }
                time = Int64(t)
            }
            return Transition(day: day, time: time)
        }
    }
}
