// SPDX-License-Identifier: MIT
import NIOCore
import NIOHTTP1
import NIOPosix

/// One open connection to an origin, carrying one exchange at a time.
final class HTTPConnection: Sendable {
    let origin: HTTPTarget.Origin
    let channel: any Channel
    private let collector: NIOLoopBound<AnswerCollector>

    private init(origin: HTTPTarget.Origin, channel: any Channel, collector: NIOLoopBound<AnswerCollector>) {
        self.origin = origin
        self.channel = channel
        self.collector = collector
    }

    /// Connects (and, for https, adds TLS) on one loop of `group`.
    static func open(_ target: HTTPTarget, group: any EventLoopGroup, connectTimeout: TimeAmount,
                     answerLimit: Int, tls: TLSConnectionSetup?) -> EventLoopFuture<HTTPConnection> {
        let describeTLS: (@Sendable (any Error) -> String?)? = tls == nil ? nil : TLSConnectionSetup.describe
        let connectDeadline = NIODeadline.now() + connectTimeout
        // The handshake's outcome is promised before the connection exists: a handshake
        // can fail, and the channel close, before the connect's continuation runs, and the
        // error must still be the TLS one, not "closed channel".
        let loop = group.next()
        let handshake = tls == nil ? nil : loop.makePromise(of: Void.self)
        let connecting = ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls, let handshake { try tls.addHandler(to: channel, target: target, done: handshake) }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(AnswerCollector(limit: answerLimit, describeTLS: describeTLS))
                }
            }
            .connect(host: target.host, port: target.port)
        connecting.whenFailure { handshake?.fail($0) }
        return connecting
            .flatMap { channel in
                let ready = tls.flatMap { tls in handshake.map { tls.handshake(channel, done: $0, by: connectDeadline, timeout: connectTimeout) } }
                    ?? channel.eventLoop.makeSucceededVoidFuture()
                return ready.flatMapThrowing {
                    let collector = try channel.pipeline.syncOperations.handler(type: AnswerCollector.self)
                    return HTTPConnection(origin: target.origin, channel: channel,
                                          collector: NIOLoopBound(collector, eventLoop: channel.eventLoop))
                }
            }
    }

    /// Sends one request and collects its whole answer by `deadline`.
    func send(_ head: HTTPRequestHead, body: ByteBuffer?, deadline: NIODeadline) -> EventLoopFuture<ExchangeOutcome> {
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: ExchangeOutcome.self)
        loop.execute { [collector] in collector.value.send(head, body: body, deadline: deadline, promise: promise) }
        return promise.futureResult
    }

    /// Ends the exchange in flight, if any, with `error` and closes the connection.
    func abandon(_ error: HTTPExchangeError) {
        channel.eventLoop.execute { [collector] in collector.value.fail(error) }
    }

    func close() {
        channel.close(promise: nil)
    }
}
