// SPDX-License-Identifier: MIT
import NIOCore
import NIOHTTP1

/// Answers `GET /` with the page, `GET /events` with the frame stream and `GET /summary`
/// with the last class's summary; paths of `routes` (the coach page) go to it with their
/// body; everything else is 404 (or 405 for a method other than GET and HEAD). Written on
/// SwiftNIO's HTTP/1 codec directly: a stream is one channel the broadcaster writes to,
/// with no task, buffer or router per screen (see docs/wall.md, "Memory").
final class WallHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// A routed request's body beyond this is refused (413): the coach page's forms are
    /// a few hundred bytes.
    static let maximumBody = 64 << 10

    let page: ByteBuffer
    let broadcaster: FrameBroadcaster
    let board: WallBoard?
    let routes: (any WallRoutes)?
    private var request: HTTPRequestHead?
    private var body: [UInt8]?
    private var tooLarge = false
    private var busy = false
    private var streaming = false

    init(page: ByteBuffer, broadcaster: FrameBroadcaster, board: WallBoard? = nil, routes: (any WallRoutes)? = nil) {
        self.page = page
        self.broadcaster = broadcaster
        self.board = board
        self.routes = routes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            request = head
            body = routes?.handles(String(Self.path(head.uri))) == true ? [] : nil
            tooLarge = false
        case var .body(buffer):
            guard body != nil, !tooLarge else { return }
            if body!.count + buffer.readableBytes > Self.maximumBody {
                tooLarge = true
                body = []
            } else {
                body!.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            }
        case .end:
            guard let head = request, !streaming, !busy else { return }
            request = nil
            if let collected = body, let routes {
                body = nil
                guard !tooLarge else {
                    return answer(.payloadTooLarge, "text/plain; charset=utf-8", ByteBuffer(string: "body too large\n"), head, context)
                }
                route(head, collected, routes, context)
            } else {
                respond(to: head, context: context)
            }
        }
    }

    static func path(_ uri: String) -> Substring {
        uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// Hands the request to `routes` and writes its answer back on the channel's loop.
    private func route(_ head: HTTPRequestHead, _ body: [UInt8], _ routes: any WallRoutes, _ context: ChannelHandlerContext) {
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var remote = ""
        if let address = context.channel.remoteAddress?.ipAddress { remote = address }
        let request = WallRequest(method: head.method.rawValue, path: String(parts.first ?? ""),
                                  query: parts.count > 1 ? String(parts[1]) : "",
                                  headers: head.headers.map { (name: $0.name, value: $0.value) }, body: body, remoteAddress: remote)
        busy = true
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        Task {
            let response = await routes.respond(request)
            loop.execute {
                let (handler, context) = bound.value
                handler.busy = false
                var headers: [(String, String)] = []
                for h in response.headers { headers.append((h.name, h.value)) }
                handler.answer(HTTPResponseStatus(statusCode: response.status), response.contentType,
                               ByteBuffer(bytes: response.body), head, context, extra: headers)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if streaming { broadcaster.remove(context.channel) }
        context.fireChannelInactive()
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard head.method == .GET || head.method == .HEAD else {
            return answer(.methodNotAllowed, "text/plain; charset=utf-8", ByteBuffer(string: "read-only\n"), head, context)
        }
        switch Self.path(head.uri) {
        case "/":
            answer(.ok, "text/html; charset=utf-8", page, head, context)
        case "/summary":
            guard let html = board?.summaryHTML() else {
                return answer(.notFound, "text/plain; charset=utf-8", ByteBuffer(string: "no class summary now\n"), head, context)
            }
            answer(.ok, "text/html; charset=utf-8", ByteBuffer(string: html), head, context)
        case "/events":
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/event-stream")
            headers.add(name: "Cache-Control", value: "no-store")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
            guard let latest = broadcaster.add(context.channel) else {
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in channel.close(promise: nil) }
                return
            }
            streaming = true
            var first = ByteBuffer(string: "retry: 1000\n\n")
            if var frame = latest { first.writeBuffer(&frame) }
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(first))), promise: nil)
        default:
            answer(.notFound, "text/plain; charset=utf-8", ByteBuffer(string: "not found\n"), head, context)
        }
    }

    private func answer(_ status: HTTPResponseStatus, _ type: String, _ body: ByteBuffer, _ request: HTTPRequestHead,
                        _ context: ChannelHandlerContext, extra: [(String, String)] = []) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Cache-Control", value: "no-store")
        let keepAlive = request.isKeepAlive
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if request.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive { done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) } }
    }
}
