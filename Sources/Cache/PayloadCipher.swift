// SPDX-License-Identifier: MIT
import Crypto
import Foundation

/// AES-256-GCM of stored payloads. The record id is the additional authenticated data,
/// so a payload moved to another row fails to open instead of passing as that record.
/// The one part of the cache on Foundation (swift-crypto's types): it runs only when a
/// key is configured.
/// `@unchecked`: `SymmetricKey` is an immutable value that swift-crypto has not marked
/// Sendable; it is never mutated after `init`.
struct PayloadCipher: @unchecked Sendable {
    private let key: SymmetricKey
    private static let checkPlaintext = Array("blegate cache key check v1".utf8)

    init(keyBytes: [UInt8]) throws(CacheError) {
        guard keyBytes.count == 32 else {
            throw CacheError(.badKey, "the encryption key must be 32 bytes, got \(keyBytes.count)")
        }
        key = SymmetricKey(data: keyBytes)
    }

    /// nonce (12) ‖ ciphertext ‖ tag (16)
    func seal(_ plaintext: [UInt8], id: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(id.utf8))
        guard let combined = box.combined else { throw CacheError(.writeFailed, "AES-GCM produced no combined form") }
        return Array(combined)
    }

    func open(_ sealed: [UInt8], id: String) throws(CacheError) -> [UInt8] {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return Array(try AES.GCM.open(box, using: key, authenticating: Array(id.utf8)))
        } catch {
            throw CacheError(.unreadablePayload, "record \(id): payload fails AES-GCM authentication (wrong key or corrupted)")
        }
    }

    /// A sealed known text stored once per cache, to tell a wrong key at open time.
    func makeKeyCheck() throws -> [UInt8] { try seal(PayloadCipher.checkPlaintext, id: "key-check") }

    func verify(keyCheck: [UInt8]) -> Bool {
        (try? open(keyCheck, id: "key-check")) == PayloadCipher.checkPlaintext
    }
}
