// SPDX-License-Identifier: MIT

/// The outbox's idempotency keys: time-ordered UUIDs (version 7, RFC 9562) in lowercase
/// 8-4-4-4-12 form. Ids minted later sort after earlier ones, so the UNIQUE index on them
/// grows at its right edge (one page per commit) instead of taking a write on a random
/// page per record, which random ids did.
enum RecordID {
    /// Mints strictly increasing ids: the 48-bit millisecond time, then a 12-bit counter
    /// within that millisecond (a full counter borrows the next millisecond), then 62
    /// random bits.
    struct Maker {
        private var lastMilliseconds: Int64 = 0
        private var counter: UInt64 = 0

        mutating func next<G: RandomNumberGenerator>(atMilliseconds now: Int64, using generator: inout G) -> String {
            if now > lastMilliseconds {
                lastMilliseconds = now
                counter = 0
            } else if counter < 0xFFF {
                counter += 1
            } else {
                lastMilliseconds += 1
                counter = 0
            }
            let time = UInt64(lastMilliseconds) & 0xFFFF_FFFF_FFFF
            let hi = (time << 16) | 0x7000 | counter                          // version 7
            let lo = ((generator.next() as UInt64) & ~(0xC000 << 48)) | (0x8000 << 48)   // RFC 9562 variant
            return RecordID.format(hi, lo)
        }
    }

    static func format(_ hi: UInt64, _ lo: UInt64) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0x2D, count: 36)
        var pos = 0
        func put(_ v: UInt64, _ nibbles: Int) {
            for i in stride(from: nibbles - 1, through: 0, by: -1) {
                if pos == 8 || pos == 13 || pos == 18 || pos == 23 { pos += 1 }
                out[pos] = digits[Int((v >> (UInt64(i) * 4)) & 0xF)]
                pos += 1
            }
        }
        put(hi, 16)
        put(lo, 16)
        return String(decoding: out, as: UTF8.self)
    }
}
