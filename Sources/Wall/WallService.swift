// SPDX-License-Identifier: MIT
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The wall's HTTP server: `GET /` the page, `GET /events` the live frames as
/// Server-Sent Events, `GET /summary` the last class's summary, and the coach page's
/// paths (`routes`). Nothing a screen sends changes anything.
///
/// A wall that cannot listen (port taken, address not on this machine) is reported once
/// and tried again every `retryInterval`; the gateway keeps collecting meanwhile, which
/// matters more than the screen.
public final class WallService: Service {
    /// How often a frame is built when something changed; a notification waits at most
    /// this long before it is on its way to the screens.
    public static let tick = Duration.milliseconds(250)
    /// How often a listener that could not bind tries again (a port another program held
    /// while booting is usually free within seconds).
    public static let retryInterval = Duration.seconds(5)

    public let board: WallBoard
    public let broadcaster = FrameBroadcaster()
    let settings: WallSettings
    let logger: Logger
    let onListening: @Sendable (Int) -> Void
    let onFailure: @Sendable (String) -> Void
    let group: any EventLoopGroup
    let routes: (any WallRoutes)?

    /// `group` runs the listener and every screen's connection; `blegate run` passes the
    /// one-thread group it shares with its other NIO clients, so the wall adds no thread.
    public init(board: WallBoard, settings: WallSettings, logger: Logger,
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                routes: (any WallRoutes)? = nil,
                onListening: @escaping @Sendable (Int) -> Void = { _ in },
                onFailure: @escaping @Sendable (String) -> Void = { _ in }) {
        self.group = group
        self.routes = routes
        self.board = board
        self.settings = settings
        self.logger = logger
        self.onListening = onListening
        self.onFailure = onFailure
    }

    public func run() async throws {
        let broadcaster = self.broadcaster, board = self.board, settings = self.settings, routes = self.routes
        let page = ByteBuffer(string: WallPage.html)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                do {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(WallHTTPHandler(page: page, broadcaster: broadcaster, board: board, routes: routes))
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        await withGracefulShutdownHandler {
            var server: (any Channel)?
            var failures = 0
            while server == nil, !broadcaster.isClosed {
                do {
                    server = try await bootstrap.bind(host: settings.host, port: settings.port).get()
                } catch {
                    failures += 1
                    if failures == 1 {
                        let message = "the wall cannot listen on \(settings.host):\(settings.port): \(error); trying again every \(Self.retryInterval)"
                        logger.error("\(message)")
                        onFailure(message)
                    }
                    // In ticks, so a gateway stopping meanwhile is not held up.
                    for _ in 0..<Int(Self.retryInterval / Self.tick) where !broadcaster.isClosed {
                        try? await Task.sleep(for: Self.tick)
                    }
                }
            }
            guard let server else { return }
            if failures > 0 { logger.notice("wall: listening after \(failures) failed attempts") }
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
