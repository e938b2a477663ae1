// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1

/// A whole answer: status, headers and body.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: ByteBuffer
}

/// An answer and whether its connection can carry the next request.
struct ExchangeOutcome: Sendable {
    var answer: HTTPAnswer
    var keepAlive: Bool
}

/// How an exchange on a connection failed, and whether any byte of the answer had arrived:
/// before that, the request can go again on another connection.
struct ConnectionFailure: Error {
    var error: HTTPExchangeError
    var answerStarted: Bool
}

/// The last handler of a connection's pipeline: writes one request at a time and collects
/// its answer, up to a size limit and a deadline.
///
/// Any failure closes the connection, since what is left on it (a part of a body, a late
/// answer) cannot be told apart from the next answer. Runs on the channel's event loop only.
final class AnswerCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let limit: Int
    /// Names TLS failures; set only on https connections, so http never touches TLS code.
    private let describeTLS: (@Sendable (any Error) -> String?)?
    private var context: ChannelHandlerContext?
    private var pending: EventLoopPromise<ExchangeOutcome>?
    private var deadline: Scheduled<Void>?
    private var head: HTTPResponseHead?
    private var body = ByteBuffer()
    private var started = false

    init(limit: Int, describeTLS: (@Sendable (any Error) -> String?)?) {
        self.limit = limit
        self.describeTLS = describeTLS
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(.closedBeforeAnswer)
        self.context = nil
    }

    /// Writes `request`; `promise` gets the answer, or a `ConnectionFailure` (at the latest
    /// at `deadline`, when the connection is closed).
    func send(_ request: HTTPRequestHead, body requestBody: ByteBuffer?, deadline: NIODeadline,
              promise: EventLoopPromise<ExchangeOutcome>) {
        guard let context, context.channel.isActive, pending == nil else {
            promise.fail(ConnectionFailure(error: .closedBeforeAnswer, answerStarted: false))
            return
        }
        pending = promise
        head = nil
        body.clear()
        started = false
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        self.deadline = context.eventLoop.scheduleTask(deadline: deadline) { bound.value.fail(.deadlineExceeded) }
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        if let requestBody { context.write(wrapOutboundOut(.body(.byteBuffer(requestBody))), promise: nil) }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        let describeTLS = describeTLS
        written.futureResult.whenFailure { error in
            bound.value.fail(Self.classify(error, describeTLS: describeTLS))
        }
    }

    /// Ends the pending exchange with `error` and closes the connection.
    func fail(_ error: HTTPExchangeError) {
        guard let promise = pending else { return }
        pending = nil
        deadline?.cancel()
        deadline = nil
        promise.fail(ConnectionFailure(error: error, answerStarted: started))
        context?.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard pending != nil else {
            // Nothing was asked: a server's parting words on an idle connection.
            context.close(promise: nil)
            return
        }
        started = true
        switch unwrapInboundIn(data) {
        case let .head(answerHead):
            // 1xx (100 Continue, 103 Early Hints) come before the real answer.
            if answerHead.status.code < 200 { return }
            head = answerHead
            if let declared = answerHead.headers.first(name: "content-length").flatMap({ Int($0) }), declared > limit {
                fail(.answerTooLarge(limit: limit))
            }
        case var .body(part):
            guard head != nil else { return }
            guard body.readableBytes + part.readableBytes <= limit else {
                fail(.answerTooLarge(limit: limit))
                return
            }
            body.writeBuffer(&part)
        case .end:
            guard let head, let promise = pending else { return }
            pending = nil
            deadline?.cancel()
            deadline = nil
            let keepAlive = head.isKeepAlive
            promise.succeed(ExchangeOutcome(
                answer: HTTPAnswer(status: Int(head.status.code), headers: head.headers, body: body),
                keepAlive: keepAlive))
            body = ByteBuffer()
            if !keepAlive { context.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.closedBeforeAnswer)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if pending == nil {
            context.close(promise: nil)
        } else {
            fail(Self.classify(error, describeTLS: describeTLS))
        }
    }

    static func classify(_ error: any Error, describeTLS: (@Sendable (any Error) -> String?)?) -> HTTPExchangeError {
        if let tls = describeTLS?(error) { return .tls(tls) }
        if let io = error as? IOError { return .io(Self.reason(errno: io.errnoCode)) }
        if error is HTTPParserError { return .malformedAnswer(String(describing: error)) }
        if let channel = error as? ChannelError {
            switch channel {
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed: return .closedBeforeAnswer
            default: break
            }
        }
        return .io(String(describing: error))
    }

    /// `connection reset by peer` for ECONNRESET: strerror's words, lower-cased to sit in a sentence.
    static func reason(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let first = text.first else { return "error \(code)" }
        return first.lowercased() + text.dropFirst()
    }
}
