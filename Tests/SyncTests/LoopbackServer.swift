// SPDX-License-Identifier: MIT
import BlegateTestSupport
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A loopback HTTP/1 server writing its answers byte by byte as a test asks (Content-Length,
/// chunked, ended by closing, HTTP/1.0, trickled), optionally behind TLS, and counting the
/// connections and requests it saw.
final class LoopbackServer: Sendable {
    enum Answer: Sendable {
        /// `status` with `Content-Length` and `body`; the connection stays open.
        case sized(status: Int, body: String, extraHeaders: String = "")
        /// 200, `Transfer-Encoding: chunked`, `body` in `pieces` chunks.
        case chunked(body: [UInt8], pieces: Int)
        /// 200 with `Connection: close` and no length: the body ends when the server closes.
        case closeDelimited(body: [UInt8])
        /// An HTTP/1.0 answer with a length, then the server closes.
        case http10(body: String)
        /// 200 declaring `length` bytes, then one byte every `every`.
        case trickle(length: Int, every: TimeAmount)
    }

    struct Seen: Sendable {
        var connections = 0
        var open = 0
        var requests = 0
        var heads: [String] = []
    }

    /// What the connections' handlers share with the server.
    final class Record: Sendable {
        let seen = Mutex(Seen())
        let children = Mutex<[ObjectIdentifier: any Channel]>([:])
    }

    let port: Int
    private let channel: any Channel
    private let record = Record()

    /// - Parameters:
    ///   - dropReused: close a connection, without answering, when a second request comes on it.
    ///   - tls: certificate and key PEM files to serve TLS with.
    init(_ answer: Answer, dropReused: Bool = false, tls: (certificate: String, key: String)? = nil) async throws {
        let tlsContext = try tls.map { files in
            try NIOSSLContext(configuration: .makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(files.certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: files.key, format: .pem))))
        }
        let record = record
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    record.children.withLock { $0[ObjectIdentifier(child)] = child }
                    if let tlsContext { try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tlsContext)) }
                    try child.pipeline.syncOperations.addHandler(
                        RawAnswerer(answer: answer, dropReused: dropReused, record: record))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    var seenNow: Seen { record.seen.withLock { $0 } }

    /// Waits (up to `timeout`) until `condition` holds for what the server saw.
    func wait(timeout: Double = 20, until condition: (Seen) -> Bool) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(10)) { condition(seenNow) }
    }

    /// Closes every open connection from the server's side, as a keep-alive timeout does.
    func closeConnections() async {
        let open = record.children.withLock { Array($0.values) }
        for child in open { try? await child.close() }
    }

    func stop() async {
        await closeConnections()
        try? await channel.close()
    }
}

/// One connection's side of `LoopbackServer`: reads each request whole (head, then as many
/// body bytes as `Content-Length` says) and writes the answer as raw bytes.
private final class RawAnswerer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let answer: LoopbackServer.Answer
    let dropReused: Bool
    let record: LoopbackServer.Record
    private var received = ByteBuffer()
    private var requestsHere = 0

    init(answer: LoopbackServer.Answer, dropReused: Bool, record: LoopbackServer.Record) {
        self.answer = answer
        self.dropReused = dropReused
        self.record = record
    }

    func channelActive(context: ChannelHandlerContext) {
        record.seen.withLock {
            $0.connections += 1
            $0.open += 1
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        record.seen.withLock { $0.open -= 1 }
        record.children.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(context.channel)) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var part = unwrapInboundIn(data)
        received.writeBuffer(&part)
        while let head = takeRequest() {
            requestsHere += 1
            record.seen.withLock {
                $0.requests += 1
                $0.heads.append(head)
            }
            if dropReused, requestsHere > 1 {
                context.close(promise: nil)
                return
            }
            write(context: context)
        }
    }

    /// The next whole request's head, taken off `received` with its body; nil until one is whole.
    private func takeRequest() -> String? {
        let bytes = Array(received.readableBytesView)
        let separator = Array("\r\n\r\n".utf8)
        guard bytes.count >= separator.count,
              let end = (0...(bytes.count - separator.count)).first(where: { bytes[$0..<($0 + separator.count)].elementsEqual(separator) })
        else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        var length = 0
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.dropFirst("content-length:".count).trimmingPrefix(while: { $0 == " " })) ?? 0
        }
        let total = end + separator.count + length
        guard bytes.count >= total else { return nil }
        received.moveReaderIndex(forwardBy: total)
        received.discardReadBytes()
        return head
    }

    private func write(context: ChannelHandlerContext) {
        switch answer {
        case let .sized(status, body, extra):
            send(context, "HTTP/1.1 \(status) Answer\r\nContent-Type: application/json\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        case let .chunked(body, pieces):
            var out = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
            let size = max(1, (body.count + pieces - 1) / pieces)
            for start in stride(from: 0, to: body.count, by: size) {
                let piece = body[start..<min(body.count, start + size)]
                out += Array("\(String(piece.count, radix: 16))\r\n".utf8) + piece + Array("\r\n".utf8)
            }
            out += Array("0\r\n\r\n".utf8)
            sendBytes(context, out)
        case let .closeDelimited(body):
            sendBytes(context, Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".utf8) + body, thenClose: true)
        case let .http10(body):
            send(context, "HTTP/1.0 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)", thenClose: true)
        case let .trickle(length, every):
            send(context, "HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\n")
            trickle(context, left: length, every: every)
        }
    }

    private func trickle(_ context: ChannelHandlerContext, left: Int, every: TimeAmount) {
        guard left > 0 else { return }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: every) {
            let (handler, context) = bound.value
            guard context.channel.isActive else { return }
            handler.send(context, " ")
            handler.trickle(context, left: left - 1, every: every)
        }
    }

    private func send(_ context: ChannelHandlerContext, _ text: String, thenClose: Bool = false) {
        sendBytes(context, Array(text.utf8), thenClose: thenClose)
    }

    private func sendBytes(_ context: ChannelHandlerContext, _ bytes: [UInt8], thenClose: Bool = false) {
        let done = context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)))
        if thenClose {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
