// SPDX-License-Identifier: MIT
import NIOCore
import NIOHTTP1

/// Answers `GET /` with the page and `GET /events` with the frame stream; everything
/// else is 404 (or 405 for a method other than GET and HEAD). Written on SwiftNIO's
/// HTTP/1 codec directly: a stream is one channel the broadcaster writes to, with no
/// task, buffer or router per screen (see docs/wall.md, "Memory").
final class WallHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let page: ByteBuffer
    let broadcaster: FrameBroadcaster
    private var request: HTTPRequestHead?
    private var streaming = false

    init(page: ByteBuffer, broadcaster: FrameBroadcaster) {
        self.page = page
        self.broadcaster = broadcaster
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request, !streaming else { return }
            request = nil
            respond(to: head, context: context)
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
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        switch path {
        case "/":
            answer(.ok, "text/html; charset=utf-8", page, head, context)
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
                        _ context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
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
