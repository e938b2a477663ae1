// SPDX-License-Identifier: MIT
import Timing

extension TimeZoneFile {
    /// An instant as local ISO 8601 with its UTC offset, to the second, for people
    /// (`2026-11-28T18:05:12+01:00`; UTC shows as `+00:00`).
    public func iso8601(millisecondsSince1970 ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let offset = Int64(offset(at: seconds))
        let local = seconds + offset
        let days = CivilDays.days(seconds: local)
        let (y, m, d) = CivilDays.date(days: days)
        let sod = Int(local - days * 86_400)
        let sign = offset < 0 ? "-" : "+"
        let off = Int(abs(offset))
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(sod / 3600, 2)):\(pad(sod / 60 % 60, 2)):\(pad(sod % 60, 2))"
            + "\(sign)\(pad(off / 3600, 2)):\(pad(off / 60 % 60, 2))"
    }

    private func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
