// SPDX-License-Identifier: MIT
import Timing

/// Durations in the config: a bare number is seconds; a string carries one unit
/// (`"250ms"`, `"5s"`, `"10m"`, `"2h"`, `"7d"`), so retention and polling intervals read
/// the way people say them.
public enum ConfigDuration {
    /// The duration a string denotes, or nil when it is not of the accepted form.
    public static func parse(_ text: String) -> Duration? {
        let s = text.trimmingSpaces()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400), ("w", 604_800)]
        // "ms" before "m" and "s": the longest suffix that matches wins.
        for (suffix, scale) in units where s.hasSuffix(suffix) {
            let number = String(s.dropLast(suffix.count)).trimmingSpaces()
            guard let value = parseDecimal(number) else { continue }
            return seconds(value * scale)
        }
        return nil
    }

    /// Seconds as a `Duration`, at millisecond resolution (finer is meaningless here).
    public static func seconds(_ value: Double) -> Duration? {
        guard value.isFinite, value >= 0, value < 1e12 else { return nil }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    /// `"7d"`, `"10m"`, `"250ms"`: the shortest exact spelling, for messages and stats.
    public static func format(_ d: Duration) -> String {
        let ms = d.milliseconds
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000)]
            where ms != 0 && ms % size == 0 {
            return "\(ms / size)\(unit)"
        }
        return "\(ms)ms"
    }

    /// Plain decimal digits with an optional fraction: no sign, exponent or hex.
    static func parseDecimal(_ s: String) -> Double? {
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              s.filter({ $0 == "." }).count <= 1, s.first != ".", s.last != "." else { return nil }
        return Double(s)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
