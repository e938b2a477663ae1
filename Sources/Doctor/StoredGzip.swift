// SPDX-License-Identifier: MIT

/// A gzip member (RFC 1952) whose deflate data is stored, not compressed. The backend
/// contract wants gzip bodies; the doctor's probe is a few dozen bytes, so compressing
/// would buy nothing and this avoids a compression dependency.
public enum StoredGzip {
    public static func encode(_ data: [UInt8]) -> [UInt8] {
        // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=3 (Unix).
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        var offset = 0
        repeat {
            let n = min(65535, data.count - offset)
            let last: UInt8 = offset + n == data.count ? 1 : 0
            out.append(last) // BFINAL, BTYPE=00 (stored)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        out += littleEndian(crc32(data))
        out += littleEndian(UInt32(truncatingIfNeeded: data.count))
        return out
    }

    static func littleEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
    }

    /// CRC-32 (IEEE, reflected, polynomial 0xEDB88320), bit by bit: bodies are tiny.
    public static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }
}
