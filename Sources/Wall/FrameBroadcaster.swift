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
    private let watchers = Mutex<[@Sendable (Bool) -> Void]>([])

    public init() {}

    public var screenCount: Int { state.withLock { $0.screens.count } }
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// `handler` hears `true` when the first screen connects and `false` when the last one
    /// leaves (on the thread that added or removed it; keep it short).
    public func onWatchedChange(_ handler: @escaping @Sendable (Bool) -> Void) {
        watchers.withLock { $0.append(handler) }
    }

    private func tell(_ watched: Bool) {
        for w in watchers.withLock({ $0 }) { w(watched) }
    }

    /// Adds a screen whose response head is written; returns the newest frame to send it
    /// at once, or nil when closed (the caller ends the response).
    func add(_ channel: any Channel) -> ByteBuffer?? {
        let (latest, first) = state.withLock { s -> (ByteBuffer??, Bool) in
            if s.closed { return (.none, false) }
            s.screens[ObjectIdentifier(channel)] = channel
            return (.some(s.latest), s.screens.count == 1)
        }
        if first { tell(true) }
        return latest
    }

    func remove(_ channel: any Channel) {
        let last = state.withLock { s -> Bool in
            s.screens.removeValue(forKey: ObjectIdentifier(channel)) != nil && s.screens.isEmpty
        }
        if last { tell(false) }
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
        if !screens.isEmpty { tell(false) }
        for channel in screens {
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
