// SPDX-License-Identifier: MIT
import Crypto

/// Tokens and pairing codes. Only a token's SHA-256 is stored, so a copy of the database
/// (a backup, a replica) lets nobody act as a gateway; a token is random enough (32 bytes)
/// that a salt adds nothing.
enum Secrets {
    static func token() -> String {
        var g = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &g) }
        return "bgt_" + hex(bytes)
    }

    static func sha256(_ token: String) -> String {
        hex(Array(SHA256.hash(data: Array(token.utf8))))
    }

    /// Six characters a member can type from a card: no 0/O, 1/I/L.
    static func pairingCode() -> String {
        let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
        var g = SystemRandomNumberGenerator()
        return String((0..<6).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &g)] })
    }

    static func uuid() -> String {
        var g = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let h = hex(bytes)
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        s.reserveCapacity(bytes.count * 2)
        for b in bytes {
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 0x0F)])
        }
        return s
    }
}
