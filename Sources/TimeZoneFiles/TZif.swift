// SPDX-License-Identifier: MIT

/// A compiled time zone file (TZif, RFC 8536), as tzdata installs under
/// /usr/share/zoneinfo: the UTC offset in force from each transition on, and the rule
/// (its footer) for instants after the last transition.
struct TZif: Sendable {
    /// Transition instants, Unix seconds, ascending.
    var transitions: [Int64]
    /// The UTC offset (seconds east) in force from `transitions[i]` on.
    var offsets: [Int32]
    /// The offset before the first transition (or always, with none).
    var initialOffset: Int32
    /// The footer's rule for instants after the last transition (nil: the last offset stays).
    var rule: PosixTimeZoneRule?

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    init(transitions: [Int64], offsets: [Int32], initialOffset: Int32, rule: PosixTimeZoneRule?) {
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.rule = rule
    }

    init(bytes b: [UInt8]) throws(Malformed) {
        var reader = Reader(bytes: b)
        let first = try reader.header()
        guard first.version >= 2 else {
            // Version 1: 32-bit data and no footer.
            (transitions, offsets, initialOffset) = try reader.block(first, timeSize: 4)
            rule = nil
            return
        }
        // Version 2 and later repeat the data with 64-bit times after the version 1 block;
        // the version 1 block is skipped.
        reader.skip(first.blockSize(timeSize: 4))
        let second = try reader.header()
        (transitions, offsets, initialOffset) = try reader.block(second, timeSize: 8)
        let footer = reader.footer()
        rule = footer.isEmpty ? nil : PosixTimeZoneRule(footer)
    }

    /// The UTC offset in seconds at a Unix instant.
    func offset(at t: Int64) -> Int32 {
        guard let last = transitions.last else { return rule?.offset(at: t) ?? initialOffset }
        if t >= last, let rule { return rule.offset(at: t) }
        // The last transition at or before t.
        var lo = 0, hi = transitions.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if transitions[mid] <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? initialOffset : offsets[lo - 1]
    }

    private struct Header {
        var version: Int
        var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int

        func blockSize(timeSize: Int) -> Int {
            timecnt * timeSize + timecnt + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skip(_ n: Int) { at += n }

        mutating func int(_ size: Int) throws(Malformed) -> Int64 {
            guard at + size <= bytes.count else { throw Malformed(description: "the TZif file is cut short") }
            var v: UInt64 = 0
            for i in 0..<size { v = v << 8 | UInt64(bytes[at + i]) }
            at += size
            // Sign-extend 32-bit values.
            return size == 4 ? Int64(Int32(bitPattern: UInt32(v))) : Int64(bitPattern: v)
        }

        mutating func header() throws(Malformed) -> Header {
            guard at + 44 <= bytes.count, bytes[at..<at + 4].elementsEqual("TZif".utf8) else {
                throw Malformed(description: "not a TZif file")
            }
            let version = bytes[at + 4] == 0 ? 1 : Int(bytes[at + 4]) - 0x30
            at += 20
            var counts: [Int] = []
            for _ in 0..<6 {
                let n = try int(4)
                guard n >= 0, n < 1 << 20 else { throw Malformed(description: "a TZif count out of range") }
                counts.append(Int(n))
            }
            return Header(version: version, isutcnt: counts[0], isstdcnt: counts[1], leapcnt: counts[2],
                          timecnt: counts[3], typecnt: counts[4], charcnt: counts[5])
        }

        mutating func block(_ h: Header, timeSize: Int) throws(Malformed) -> ([Int64], [Int32], Int32) {
            guard h.typecnt > 0, at + h.blockSize(timeSize: timeSize) <= bytes.count else {
                throw Malformed(description: "the TZif file is cut short")
            }
            var times: [Int64] = []
            for _ in 0..<h.timecnt { times.append(try int(timeSize)) }
            var indices: [Int] = []
            for _ in 0..<h.timecnt {
                indices.append(Int(bytes[at]))
                at += 1
            }
            var typeOffsets: [Int32] = []
            for _ in 0..<h.typecnt {
                typeOffsets.append(Int32(try int(4)))
                at += 2  // isdst, abbreviation index
            }
            guard indices.allSatisfy({ $0 < h.typecnt }) else { throw Malformed(description: "a TZif type index out of range") }
            at += h.charcnt + h.leapcnt * (timeSize + 4) + h.isstdcnt + h.isutcnt
            // Before the first transition: the first standard-time type (RFC 8536 3.2 leaves
            // it to the reader; type 0 is what zic writes for it).
            let initial = typeOffsets[0]
            return (times, indices.map { typeOffsets[$0] }, initial)
        }

        /// The text between the two newlines after the version 2 data.
        mutating func footer() -> String {
            guard at < bytes.count, bytes[at] == 0x0A,
                  let end = bytes[(at + 1)...].firstIndex(of: 0x0A) else { return "" }
            return String(decoding: bytes[(at + 1)..<end], as: UTF8.self)
        }
    }
}
