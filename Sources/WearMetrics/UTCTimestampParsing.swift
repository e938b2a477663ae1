// SPDX-License-Identifier: MIT
import Timing

extension UTCTimestamp {
    /// Parses RFC 3339 / ISO 8601 date-times: `2026-01-02T03:04:05Z`, with an optional
    /// fraction (rounded to the millisecond) and `Z` or a `±HH:MM` offset; a bare date
    /// (`2026-01-02`) is its UTC midnight. Integer arithmetic only, like the formatter.
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard let y = digits(0, 4), b.count >= 10, b[4] == 0x2D, let mo = digits(5, 2), b[7] == 0x2D, let d = digits(8, 2),
              (1...12).contains(mo), (1...31).contains(d) else { return nil }
        var ms: Int64 = 0
        var offsetMinutes = 0
        if b.count > 10 {
            guard b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == 0x20,
                  let h = digits(11, 2), b.count > 13, b[13] == 0x3A, let mi = digits(14, 2), b.count > 16, b[16] == 0x3A,
                  let s = digits(17, 2), h < 24, mi < 60, s < 61 else { return nil }
            ms = Int64(h * 3600 + mi * 60 + s) * 1000
            var i = 19
            if i < b.count, b[i] == UInt8(ascii: ".") {
                i += 1
                var fraction = 0.0, scale = 0.1
                let start = i
                while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { fraction += Double(b[i] - 0x30) * scale; scale /= 10; i += 1 }
                guard i > start else { return nil }
                ms += Int64((fraction * 1000).rounded())
            }
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A, let om = digits(i + 4, 2) else { return nil }
                offsetMinutes = (oh * 60 + om) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
                i += 6
            } else {
                return nil
            }
            guard i == b.count else { return nil }
        }
        let days = CivilDays.days(year: y, month: mo, day: d)
        self.init(millisecondsSince1970: days * 86_400_000 + ms - Int64(offsetMinutes) * 60_000)
    }
}
