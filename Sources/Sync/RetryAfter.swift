// SPDX-License-Identifier: MIT
import Timing
import WearMetrics

/// The `Retry-After` header of a 429 or 503: either delay-seconds or an HTTP-date
/// (RFC 9110 §10.2.3). A date in the past means "now"; anything unreadable is ignored, and
/// the engine falls back to its own backoff.
public enum RetryAfter {
    public static func parse(_ value: String, now: UTCTimestamp) -> Duration? {
        let text = value.trimmingSpaces
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Absurdly long digit strings saturate rather than fail.
            guard let seconds = Int64(text.prefix(12)) else { return nil }
            return .seconds(seconds)
        }
        guard let date = httpDate(text) else { return nil }
        let ms = date.millisecondsSince1970 - now.millisecondsSince1970
        return .milliseconds(max(ms, 0))
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and the obsolete RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms
    /// that recipients must still accept. In all three the day comes before the year.
    static func httpDate(_ text: String) -> UTCTimestamp? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" })
        var month: Int?
        var numbers: [Int] = []
        var clock: [Int]?
        for token in tokens {
            if token.contains(":") {
                let parts = token.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 3 else { return nil }
                clock = parts
            } else if let n = Int(token) {
                numbers.append(n)
            } else if let m = monthNames.firstIndex(of: token.lowercased().prefix(3).description), token.count >= 3, month == nil,
                      !weekdayNames.contains(token.lowercased().prefix(3).description) {
                month = m + 1
            }
        }
        guard let month, let clock, numbers.count == 2 else { return nil }
        let day = numbers[0]
        var year = numbers[1]
        if year < 100 { year += year >= 70 ? 1900 : 2000 }
        guard (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        let days = CivilDays.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(clock[0] * 3600 + clock[1] * 60 + clock[2])
        return UTCTimestamp(millisecondsSince1970: seconds * 1000)
    }

    /// IMF-fixdate for a `Retry-After` the test backend sends, and for messages.
    public static func httpDate(_ t: UTCTimestamp) -> String {
        let seconds = t.millisecondsSince1970 / 1000
        let days = seconds / 86_400
        let (y, m, d) = CivilDays.date(days: days)
        let weekday = Int(((days % 7) + 10) % 7) // 1970-01-01 was a Thursday (index 3).
        let sod = Int(seconds % 86_400)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekdayNames[weekday].capitalized3), \(two(d)) \(monthNames[m - 1].capitalized3) \(y) \(two(sod / 3600)):\(two(sod / 60 % 60)):\(two(sod % 60)) GMT"
    }

    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s = s.dropLast() }
        return String(s)
    }

    fileprivate var capitalized3: String { prefix(1).uppercased() + dropFirst() }
}
