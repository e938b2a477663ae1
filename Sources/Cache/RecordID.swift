// SPDX-License-Identifier: MIT
import Glibc

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

        /// Appends the next id's 36 characters (ASCII) to `out`.
        mutating func next<G: RandomNumberGenerator>(atMilliseconds now: Int64, using generator: inout G, appendingTo out: inout [UInt8]) {
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
            RecordID.format(hi, lo, appendingTo: &out)
        }
    }

    static let length = 36

    /// Appends the 8-4-4-4-12 lowercase hex form of the 128 bits `hi`, `lo`.
    static func format(_ hi: UInt64, _ lo: UInt64, appendingTo out: inout [UInt8]) {
        for n in 0..<32 {
            if n == 8 || n == 12 || n == 16 || n == 20 { out.append(0x2D) }
            let nibble = UInt8(truncatingIfNeeded: (n < 16 ? hi : lo) >> (UInt64(15 - n % 16) * 4)) & 0xF
            out.append(nibble < 10 ? 0x30 + nibble : 0x57 + nibble)
        }
    }
}

/// The kernel's random bits (glibc's `arc4random_buf`, on getrandom like
/// `SystemRandomNumberGenerator`) fetched 32 numbers at a time: the writer thread mints an
/// id per record, and a system call for each would be a visible part of a commit's cost.
struct BufferedSystemRandom: RandomNumberGenerator {
    private var buffer = [UInt64](repeating: 0, count: 32)
    private var used = 32

    mutating func next() -> UInt64 {
        if used == buffer.count { refill() }
        used += 1
        return buffer[used - 1]
    }

    private mutating func refill() {
        buffer.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        used = 0
    }
}
