// SPDX-License-Identifier: MIT
import NIOCore
import Synchronization

/// One serialised frame shared by every screen. A screen waits for a frame newer than
/// the one it sent last; publishing wakes all of them with the same buffer (a ByteBuffer
/// copy shares its storage), so ten screens cost ten socket writes, not ten encodings.
/// A slow screen skips to the newest frame instead of queueing old ones.
public final class FrameBroadcaster: Sendable {
    struct State {
        var version = 0
        var frame: ByteBuffer?
        var waiters: [(after: Int, continuation: CheckedContinuation<(Int, ByteBuffer)?, Never>)] = []
        var closed = false
        var clients = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var clientCount: Int { state.withLock { $0.clients } }
    public var isClosed: Bool { state.withLock { $0.closed } }

    public func publish(_ frame: ByteBuffer) {
        let (version, wake) = state.withLock { s -> (Int, [CheckedContinuation<(Int, ByteBuffer)?, Never>]) in
            s.version += 1
            s.frame = frame
            defer { s.waiters.removeAll() }
            return (s.version, s.waiters.map(\.continuation))
        }
        for w in wake { w.resume(returning: (version, frame)) }
    }

    /// The newest frame after `version`, waiting for one; nil once closed.
    public func next(after version: Int) async -> (Int, ByteBuffer)? {
        await withCheckedContinuation { c in
            let ready = state.withLock { s -> (Int, ByteBuffer)?? in
                if s.closed { return .some(nil) }
                if s.version > version, let f = s.frame { return .some((s.version, f)) }
                s.waiters.append((version, c))
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }

    func connected() { state.withLock { $0.clients += 1 } }
    func disconnected() { state.withLock { $0.clients -= 1 } }

    /// Ends every stream (graceful shutdown).
    public func close() {
        let wake = state.withLock { s -> [CheckedContinuation<(Int, ByteBuffer)?, Never>] in
            s.closed = true
            defer { s.waiters.removeAll() }
            return s.waiters.map(\.continuation)
        }
        for w in wake { w.resume(returning: nil) }
    }
}
