// SPDX-License-Identifier: MIT

/// Random (version 4) UUIDs in lowercase 8-4-4-4-12 form, the outbox's idempotency keys.
enum RecordID {
    static func make<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var hi = generator.next() as UInt64
        var lo = generator.next() as UInt64
        hi = (hi & ~0xF000) | 0x4000                      // version 4
        lo = (lo & ~(0xC000 << 48)) | (0x8000 << 48)       // RFC 4122 variant
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
