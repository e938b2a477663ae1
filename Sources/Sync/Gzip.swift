// SPDX-License-Identifier: MIT
import CompressNIO
import NIOCore

/// Request bodies are gzip-compressed (`Content-Encoding: gzip`): heart-rate JSON shrinks
/// about tenfold, which matters on a gym's shared uplink during a catch-up.
/// `blegate doctor`'s probe is compressed the same way.
package enum Gzip {
    package static func compress(_ text: String) throws -> ByteBuffer {
        try compress(ByteBuffer(string: text))
    }

    package static func compress(_ plain: ByteBuffer) throws -> ByteBuffer {
        var plain = plain
        // Level 1: nearly the ratio of the default on this repetitive JSON, at a fraction
        // of the CPU a Pi spends during a backlog catch-up.
        return try plain.compress(with: .gzip(configuration: .init(compressionLevel: 1)))
    }
}
