// SPDX-License-Identifier: MIT
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The wall's HTTP server: `GET /` the page, `GET /events` the live frames as
/// Server-Sent Events. Read-only: nothing a screen sends changes anything.
///
/// A wall that cannot listen (port taken, address not on this machine) is reported and
/// stays off; the gateway keeps collecting, which matters more than the screen.
public final class WallService: Service {
    /// How often a frame is built when something changed; a notification waits at most
    /// this long before it is on its way to the screens.
    public static let tick = Duration.milliseconds(250)

    public let board: WallBoard
    public let broadcaster = FrameBroadcaster()
    let settings: WallSettings
    let logger: Logger
    let onListening: @Sendable (Int) -> Void
    let onFailure: @Sendable (String) -> Void
    let group: any EventLoopGroup

    /// `group` runs the listener and every screen's connection; `blegate run` passes the
    /// one-thread group it shares with its other NIO clients, so the wall adds no thread.
    public init(board: WallBoard, settings: WallSettings, logger: Logger,
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                onListening: @escaping @Sendable (Int) -> Void = { _ in },
                onFailure: @escaping @Sendable (String) -> Void = { _ in }) {
        self.group = group
        self.board = board
        self.settings = settings
        self.logger = logger
        self.onListening = onListening
        self.onFailure = onFailure
    }

    public func run() async throws {
        let broadcaster = self.broadcaster, board = self.board, settings = self.settings
        let page = ByteBuffer(string: WallPage.html)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                do {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(WallHTTPHandler(page: page, broadcaster: broadcaster))
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        await withGracefulShutdownHandler {
            let server: any Channel
            do {
                server = try await bootstrap.bind(host: settings.host, port: settings.port).get()
            } catch {
                let message = "the wall cannot listen on \(settings.host):\(settings.port): \(error)"
                logger.error("\(message)")
                onFailure(message)
                broadcaster.close()
                // Off: wait for the gateway to stop, as the other services do.
                try? await gracefulShutdown()
                return
            }
            let port = server.localAddress?.port ?? settings.port
            logger.notice("wall: http://\(settings.host):\(port)/")
            onListening(port)
            while !broadcaster.isClosed {
                if let frame = board.frame() {
                    broadcaster.publish(ByteBuffer(string: "data: " + frame + "\n\n"))
                }
                try? await Task.sleep(for: Self.tick)
            }
            try? await server.close()
        } onGracefulShutdown: {
            broadcaster.close()
        }
    }
}
