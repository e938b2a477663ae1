// SPDX-License-Identifier: MIT
import Hummingbird
import Logging
import NIOCore
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

    public init(board: WallBoard, settings: WallSettings, logger: Logger,
                onListening: @escaping @Sendable (Int) -> Void = { _ in },
                onFailure: @escaping @Sendable (String) -> Void = { _ in }) {
        self.board = board
        self.settings = settings
        self.logger = logger
        self.onListening = onListening
        self.onFailure = onFailure
    }

    public func run() async throws {
        let broadcaster = self.broadcaster, board = self.board
        let router = Router()
        let page = ByteBuffer(string: WallPage.html)
        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: page))
        }
        router.get("/events") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                     body: ResponseBody { writer in
                         broadcaster.connected()
                         defer { broadcaster.disconnected() }
                         try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                         var version = 0
                         while let (v, frame) = await broadcaster.next(after: version) {
                             version = v
                             try await writer.write(frame)
                         }
                         try await writer.finish(nil)
                     })
        }
        let onListening = self.onListening, logger = self.logger, settings = self.settings
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil, reuseAddress: true),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                logger.notice("wall: http://\(settings.host):\(port)/")
                onListening(port)
            },
            logger: logger
        )
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await app.runService()
                    } catch {
                        let message = "the wall cannot listen on \(settings.host):\(settings.port): \(error)"
                        logger.error("\(message)")
                        self.onFailure(message)
                        broadcaster.close()
                    }
                }
                group.addTask {
                    while !broadcaster.isClosed {
                        if let frame = board.frame() {
                            broadcaster.publish(ByteBuffer(string: "data: " + frame + "\n\n"))
                        }
                        try? await Task.sleep(for: Self.tick)
                    }
                }
                await group.waitForAll()
            }
            // Off after a failure: wait for the gateway to stop, as the other services do.
            try? await gracefulShutdown()
        } onGracefulShutdown: {
            broadcaster.close()
        }
    }
}
