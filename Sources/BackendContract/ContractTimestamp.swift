// SPDX-License-Identifier: MIT
import WearMetrics

/// The contract's times (a record's `timestamp`, a workout's `start_time`, …): ISO 8601,
/// `YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or an offset to ±15:59. One check for every
/// backend that judges them (the test backend, blegate-server), so a gateway gets the same
/// answer from both; month, day and hour are in range, so PostgreSQL's cast cannot fail on
/// a time that passed.
public enum ContractTimestamp {
    /// What a refusal says a time must be.
    public static let rule = "an ISO 8601 time with Z or an offset within ±15:59"

    public static func isValid(_ s: String) -> Bool {
        // The string's own bytes when it has them (a parsed one does), not an array of them.
        if let valid = s.utf8.withContiguousStorageIfAvailable({ isValid($0) }) { return valid }
        return Array(s.utf8).withUnsafeBufferPointer { isValid($0) }
    }

    private static func isValid(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        guard u.count >= 20, u.count <= 40 else { return false }
        let digits: [Int] = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        guard digits.allSatisfy({ u[$0] >= 0x30 && u[$0] <= 0x39 }),
              u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-"), u[10] == UInt8(ascii: "T"),
              u[13] == UInt8(ascii: ":"), u[16] == UInt8(ascii: ":") else { return false }
        func n(_ a: Int, _ b: Int) -> Int { Int(u[a] - 0x30) * 10 + Int(u[b] - 0x30) }
        guard (1...12).contains(n(5, 6)), (1...28).contains(n(8, 9)) || (29...31).contains(n(8, 9)) && dayFits(u),
              n(11, 12) < 24, n(14, 15) < 60, n(17, 18) < 60 else { return false }
        var i = 19
        if u[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < u.count, u[i] >= 0x30, u[i] <= 0x39 { i += 1 }
            guard i > start else { return false }
        }
        let rest = u[i...]
        if rest.count == 1 { return rest.first == UInt8(ascii: "Z") }
        guard rest.count == 6, rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-") else { return false }
        let o = Array(rest.dropFirst())
        guard o[2] == UInt8(ascii: ":"), [0, 1, 3, 4].allSatisfy({ o[$0] >= 0x30 && o[$0] <= 0x39 }) else { return false }
        // PostgreSQL's timestamptz takes offsets to ±15:59 (ISO 8601 allows ±23:59): a
        // time it would refuse is refused here, as the contract's pattern says.
        return Int(o[0] - 0x30) * 10 + Int(o[1] - 0x30) <= 15 && Int(o[3] - 0x30) * 10 + Int(o[4] - 0x30) <= 59
    }

    /// The time as seconds since 1970 (UTC), to the millisecond; nil when not valid. For the
    /// arithmetic on contract times: a workout's order of start and end, merge overlaps.
    public static func secondsSince1970(_ s: String) -> Double? {
        guard isValid(s), let t = UTCTimestamp(iso8601: s) else { return nil }
        return Double(t.millisecondsSince1970) / 1000
    }

    private static func dayFits(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        let year = (0..<4).reduce(0) { $0 * 10 + Int(u[$1] - 0x30) }
        let month = Int(u[5] - 0x30) * 10 + Int(u[6] - 0x30)
        let day = Int(u[8] - 0x30) * 10 + Int(u[9] - 0x30)
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }
}
