// SPDX-License-Identifier: MIT
import Crypto
import Foundation

/// AES-256-GCM of stored fields. The additional authenticated data names the row (a
/// record's id, time, device and source; a document's kind, id and revision), so sealed
/// bytes moved to another row fail to open instead of passing as that row's.
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
    func seal(_ plaintext: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: aad)
        guard let combined = box.combined else { throw CacheError(.writeFailed, "AES-GCM produced no combined form") }
        return Array(combined)
    }

    func seal(_ plaintext: [UInt8], id: String) throws -> [UInt8] { try seal(plaintext, aad: Array(id.utf8)) }

    /// The plaintext of `sealed`; `what` names the row in the error.
    func open(_ sealed: [UInt8], aad: [UInt8], what: String) throws(CacheError) -> [UInt8] {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return Array(try AES.GCM.open(box, using: key, authenticating: aad))
        } catch {
            throw CacheError(.unreadablePayload, "\(what): payload fails AES-GCM authentication (wrong key or corrupted)")
        }
    }

    func open(_ sealed: [UInt8], id: String) throws(CacheError) -> [UInt8] {
        try open(sealed, aad: Array(id.utf8), what: "record \(id)")
    }

    /// A sealed known text stored once per cache, to tell a wrong key at open time.
    func makeKeyCheck() throws -> [UInt8] { try seal(PayloadCipher.checkPlaintext, id: "key-check") }

    func verify(keyCheck: [UInt8]) -> Bool {
        (try? open(keyCheck, id: "key-check")) == PayloadCipher.checkPlaintext
    }

    /// What a record's sealed fields are authenticated with: its id, time, device address
    /// and source code, so that neither the sealed bytes nor those clear columns can be
    /// moved or changed without the record failing to open.
    static func recordAAD(id: String, timestampMs: Int64, device: String, source: Int) -> [UInt8] {
        Array("\(id)|\(timestampMs)|\(device)|\(source)".utf8)
    }
}
