// SPDX-License-Identifier: MIT
import Crypto

/// Name-based UUIDs (RFC 9562 §5.5, version 5).
public enum NameBasedUUID {
    /// The namespace of blegate sample UUIDs. Fixed forever: changing it would make every
    /// replayed sample look new to the backend.
    public static let sampleNamespace = "6f1c7a52-3b0e-4d8e-9a41-2c5d0b7e19f3"

    /// The version-5 UUID of `name` in `namespace` (lowercase 8-4-4-4-12), or nil if the
    /// namespace is not a UUID.
    public static func v5(namespace: String, name: String) -> String? {
        guard let ns = parse(namespace) else { return nil }
        var digest = Array(Insecure.SHA1.hash(data: ns + Array(name.utf8)))
        digest[6] = digest[6] & 0x0F | 0x50
        digest[8] = digest[8] & 0x3F | 0x80
        return format(Array(digest[0..<16]))
    }

    static func parse(_ text: String) -> [UInt8]? {
        let hex = text.utf8.filter { $0 != UInt8(ascii: "-") }
        guard hex.count == 32, text.utf8.count == 36 else { return nil }
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            guard let hi = nibble(hex[i]), let lo = nibble(hex[i + 1]) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        return bytes
    }

    static func format(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
