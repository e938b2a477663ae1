// SPDX-License-Identifier: MIT

#if canImport(Glibc)
// Only for libm (sqrt, round) to be linked into executables that import no other C module.
import Glibc
#endif
import Timing

/// A UTC instant with millisecond resolution, formatted by hand.
///
/// The hot path must not touch ICU-backed formatters (Foundation's ISO8601 formatting
/// pulls ICU in, 10+ MiB on a Pi), so the civil date is computed with integer arithmetic
/// (the days-to-civil algorithm on the proleptic Gregorian calendar).
public struct UTCTimestamp: Sendable, Hashable, Comparable {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    /// Rounds to the nearest millisecond. Non-finite input maps to the epoch rather than trap.
    public init(secondsSince1970: Double) {
        let ms = (secondsSince1970 * 1000).rounded()
        millisecondsSince1970 = ms.isFinite && abs(ms) < 9e15 ? Int64(ms) : 0
    }

    public var secondsSince1970: Double { Double(millisecondsSince1970) / 1000 }

    public static func < (a: UTCTimestamp, b: UTCTimestamp) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }

    /// `2026-01-02T03:04:05.678Z`
    public var iso8601: String {
        var out = ""
        out.reserveCapacity(24)
        appendISO8601(to: &out)
        return out
    }

    public func appendISO8601(to out: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendISO8601(to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }
}

extension UTCTimestamp {
    /// The ISO 8601 text as UTF-8 bytes, for writers that build bytes (a record's JSON).
    public func appendISO8601(to out: inout [UInt8]) {
        let ms = millisecondsSince1970
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 { rem += 86_400_000; days -= 1 }
        let (y, m, d) = CivilDays.date(days: days)
        let secondsOfDay = Int(rem / 1000)
        appendPadded(&out, Int(y), 4); out.append(UInt8(ascii: "-"))
        appendPadded(&out, m, 2); out.append(UInt8(ascii: "-"))
        appendPadded(&out, d, 2); out.append(UInt8(ascii: "T"))
        appendPadded(&out, secondsOfDay / 3600, 2); out.append(UInt8(ascii: ":"))
        appendPadded(&out, secondsOfDay / 60 % 60, 2); out.append(UInt8(ascii: ":"))
        appendPadded(&out, secondsOfDay % 60, 2); out.append(UInt8(ascii: "."))
        appendPadded(&out, Int(rem % 1000), 3); out.append(UInt8(ascii: "Z"))
    }
}

/// `value`'s decimal digits, zero-padded in front to `width`.
@inline(__always)
func appendPadded(_ out: inout [UInt8], _ value: Int, _ width: Int) {
    if value < 0 || value >= 10_000 {
        let digits = String(value).utf8
        for _ in digits.count..<max(width, digits.count) { out.append(0x30) }
        out.append(contentsOf: digits)
        return
    }
    var divisor = 1000
    var digits = 4
    while digits > width, value < divisor { divisor /= 10; digits -= 1 }
    var v = value
    while divisor > 0 {
        out.append(UInt8(truncatingIfNeeded: v / divisor) &+ 0x30)
        v %= divisor
        divisor /= 10
    }
}

extension UTCTimestamp {
    /// Now, from CLOCK_REALTIME: the clock records, status and the backend use. Without
    /// Foundation, so the notification path can stamp records with it.
    public static var now: UTCTimestamp { UTCTimestamp(millisecondsSince1970: WallClock.milliseconds()) }
}
