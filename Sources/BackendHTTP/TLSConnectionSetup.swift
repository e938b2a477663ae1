// SPDX-License-Identifier: MIT
import NIOCore
import NIOSSL
import NIOTLS

/// The TLS side of https connections, kept in this one file and built on the first https
/// request, so that a gateway talking plain http never runs TLS code.
final class TLSConnectionSetup: Sendable {
    private let context: NIOSSLContext

    /// Full verification: the chain to `trust` and the host name (or address) in the URL.
    init(trust: TLSTrust) throws(HTTPExchangeError) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        switch trust {
        case .system: configuration.trustRoots = .default
        case let .pemFile(path): configuration.trustRoots = .file(path)
        }
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .tls("cannot set up TLS with \(trust == .system ? "the system's trust roots" : "the certificates given"): \(error)")
        }
    }

    /// Puts TLS first in a new connection's pipeline, its handshake's outcome going to
    /// `done`. An address sends no server name and is checked against the certificate's IP
    /// addresses.
    func addHandler(to channel: any Channel, target: HTTPTarget, done: EventLoopPromise<Void>) throws {
        let handler = try NIOSSLClientHandler(context: context, serverHostname: target.hostIsAddress ? nil : target.host)
        try channel.pipeline.syncOperations.addHandlers(handler, HandshakeWatch(done: done))
    }

    /// `done` (given to `addHandler`): succeeds once the handshake of `channel` completed;
    /// fails with its error, or with `ChannelError.connectTimeout` at `deadline` (closing
    /// the channel): the connect timeout covers TLS coming up, not only TCP.
    func handshake(_ channel: any Channel, done: EventLoopPromise<Void>, by deadline: NIODeadline, timeout: TimeAmount) -> EventLoopFuture<Void> {
        let timer = channel.eventLoop.scheduleTask(deadline: deadline) {
            done.fail(ChannelError.connectTimeout(timeout))
            channel.close(promise: nil)
        }
        done.futureResult.whenComplete { _ in timer.cancel() }
        return done.futureResult
    }

    /// Completes `done` with the handshake's outcome (a promise completed twice keeps its first result).
    private final class HandshakeWatch: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let done: EventLoopPromise<Void>

        init(done: EventLoopPromise<Void>) { self.done = done }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls { done.succeed() }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            done.fail(error)
            context.fireErrorCaught(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.fail(ChannelError.eof)
            context.fireChannelInactive()
        }
    }

    /// A TLS failure in words someone setting up a gateway can act on; nil for other errors.
    @Sendable static func describe(_ error: any Error) -> String? {
        if let extra = error as? NIOSSLExtraError {
            if extra == .failedToValidateHostname {
                return "the backend's certificate is not for this host name (\(extra))"
            }
            return String(describing: extra)
        }
        guard let ssl = error as? NIOSSLError else { return nil }
        let text = String(describing: ssl)
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the backend's certificate is not trusted: it does not chain to a trusted root, or has expired (\(text))"
        }
        if case .uncleanShutdown = ssl { return "the backend closed the connection without ending TLS" }
        return "handshake failed: \(text)"
    }
}
