// SPDX-License-Identifier: MIT
import Hummingbird
import NIOCore
import Synchronization

/// The request context, keeping the connection so an outage can cut it: a real outage
/// breaks kept-alive connections too, not only new ones.
struct ConnectionContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// The open client connections, closed all at once when an outage begins.
final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func track(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let added = channels.withLock { c -> Bool in
            guard c[key] == nil else { return false }
            c[key] = channel
            return true
        }
        guard added else { return }
        channel.closeFuture.whenComplete { [self] _ in
            _ = channels.withLock { $0.removeValue(forKey: key) }
        }
    }

    func closeAll() async {
        let open = channels.withLock { c in
            defer { c.removeAll() }
            return Array(c.values)
        }
        for channel in open { try? await channel.close() }
    }
}
