// SPDX-License-Identifier: MIT
import Crypto
import Foundation

/// AES-256-GCM of stored payloads. The record id is the additional authenticated data,
/// so a payload moved to another row fails to open instead of passing as that record.
/// `@unchecked`: `SymmetricKey` is an immutable value that swift-crypto has not marked
/// Sendable; it is never mutated after `init`.
struct PayloadCipher: @unchecked Sendable {
    private let key: SymmetricKey
    private static let checkPlaintext = Data("blegate cache key check v1".utf8)

    init(keyBytes: [UInt8]) throws(CacheError) {
        guard keyBytes.count == 32 else {
            throw CacheError(.badKey, "the encryption key must be 32 bytes, got \(keyBytes.count)")
        }
        key = SymmetricKey(data: keyBytes)
    }

    /// nonce (12) ‖ ciphertext ‖ tag (16)
    func seal(_ plaintext: Data, id: String) throws -> Data {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(id.utf8))
        guard let combined = box.combined else { throw CacheError(.writeFailed, "AES-GCM produced no combined form") }
        return combined
    }

    func open(_ sealed: Data, id: String) throws(CacheError) -> Data {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return try AES.GCM.open(box, using: key, authenticating: Data(id.utf8))
        } catch {
            throw CacheError(.unreadablePayload, "record \(id): payload fails AES-GCM authentication (wrong key or corrupted)")
        }
    }

    /// A sealed known text stored once per cache, to tell a wrong key at open time.
    func makeKeyCheck() throws -> Data { try seal(PayloadCipher.checkPlaintext, id: "key-check") }

    func verify(keyCheck: Data) -> Bool {
        (try? open(keyCheck, id: "key-check")) == PayloadCipher.checkPlaintext
    }
}
