// SPDX-License-Identifier: MIT
import NIOCore
import NIOHTTP1
import Synchronization

/// The screens on `/events`, and the one frame they all get. Publishing writes the same
/// buffer to every screen's channel (a ByteBuffer copy shares its storage), so ten
/// screens cost ten socket writes per frame, not ten encodings. A screen whose socket
/// is full (a TV that stopped reading) skips frames until it drains: it gets the newest
/// one next, and the gateway queues nothing for it.
public final class FrameBroadcaster: Sendable {
    struct State {
        var screens: [ObjectIdentifier: any Channel] = [:]
        var latest: ByteBuffer?
        var closed = false
    }

    private let state = Mutex(State())

    public init() {}

    public var screenCount: Int { state.withLock { $0.screens.count } }
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Adds a screen whose response head is written; returns the newest frame to send it
    /// at once, or nil when closed (the caller ends the response).
    func add(_ channel: any Channel) -> ByteBuffer?? {
        state.withLock { s in
            if s.closed { return .none }
            s.screens[ObjectIdentifier(channel)] = channel
            return .some(s.latest)
        }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.screens.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    public func publish(_ frame: ByteBuffer) {
        let screens = state.withLock { s -> [any Channel] in
            s.latest = frame
            return Array(s.screens.values)
        }
        for channel in screens {
            channel.eventLoop.execute {
                guard channel.isActive, channel.isWritable else { return }
                channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(frame)), promise: nil)
            }
        }
    }

    /// Ends every stream (graceful shutdown) and refuses new ones.
    public func close() {
        let screens = state.withLock { s -> [any Channel] in
            s.closed = true
            defer { s.screens.removeAll() }
            return Array(s.screens.values)
        }
        for channel in screens {
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
