// SPDX-License-Identifier: MIT
import CompressNIO
import NIOCore

/// Request bodies are gzip-compressed (`Content-Encoding: gzip`): heart-rate JSON shrinks
/// about tenfold, which matters on a gym's shared uplink during a catch-up.
enum Gzip {
    static func compress(_ text: String) throws -> ByteBuffer {
        var plain = ByteBuffer(string: text)
        // Level 1: nearly the ratio of the default on this repetitive JSON, at a fraction
        // of the CPU a Pi spends during a backlog catch-up.
        return try plain.compress(with: .gzip(configuration: .init(compressionLevel: 1)))
    }
}
