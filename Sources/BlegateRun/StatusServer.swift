// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Timing

/// A request on the status socket (one JSON line; protocol in docs/status.md).
public enum StatusRequest: Sendable, Equatable {
    /// `{"command":"status"}` (or an empty line).
    case status
    /// `{"command":"pair","address":"...","client_id":"..."}`: `blegate pair` got a client
    /// id from the backend and hands it to the running gateway, whose cache tags records.
    case pair(address: String, clientID: String)
    /// `{"command":"class"}`: the running class, if any (`blegate class`).
    case classShow
    /// `{"command":"class_start","name":"...","type":"cycle"}` (`blegate class start`).
    case classStart(name: String, type: String)
    /// `{"command":"class_stop"}` (`blegate class stop`).
    case classStop

    public struct ParseError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func parse(_ line: [UInt8]) throws(ParseError) -> StatusRequest {
        if line.allSatisfy({ $0 == 32 || $0 == 13 || $0 == 9 }) { return .status }
        guard String(validating: line, as: UTF8.self) != nil,
              let object = try? JSONDecoder().decode(Line.self, from: Data(line)) else {
            throw ParseError(description: "a request is one line of JSON, e.g. {\"command\":\"status\"}")
        }
        switch object.command {
        case "status":
            return .status
        case "pair":
            guard let address = object.address, let client = object.clientID, !address.isEmpty, !client.isEmpty else {
                throw ParseError(description: "pair needs address and client_id")
            }
            return .pair(address: address, clientID: client)
        case "class":
            return .classShow
        case "class_start":
            guard let name = object.name else { throw ParseError(description: "class_start needs name") }
            return .classStart(name: name, type: object.type ?? "other")
        case "class_stop":
            return .classStop
        case let other:
            throw ParseError(description: "unknown command \(other.map { "\"\($0)\"" } ?? "(none)"); known: status, pair, class, class_start, class_stop")
        }
    }

    /// The members of a request line; one that is not a string counts as absent, so the
    /// answer names what is missing.
    private struct Line: Decodable {
        var command, address, clientID, name, type: String?

        enum CodingKeys: String, CodingKey { case command, address, clientID = "client_id", name, type }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func string(_ key: CodingKeys) -> String? { (try? c.decodeIfPresent(String.self, forKey: key)) ?? nil }
            command = string(.command)
            address = string(.address)
            clientID = string(.clientID)
            name = string(.name)
            type = string(.type)
        }
    }

    /// Pairing and class commands change what the gateway does; status only reads.
    public var changesTheGateway: Bool {
        switch self {
        case .status, .classShow: false
        case .pair, .classStart, .classStop: true
        }
    }

    /// The request as the line a client sends.
    public var line: String {
        let object: [String: String] = switch self {
        case .status: ["command": "status"]
        case let .pair(address, clientID): ["command": "pair", "address": address, "client_id": clientID]
        case .classShow: ["command": "class"]
        case let .classStart(name, type): ["command": "class_start", "name": name, "type": type]
        case .classStop: ["command": "class_stop"]
        }
        return StatusReport.text(object) + "\n"
    }
}

/// The status socket's answer to anything but `status`: `{"ok":true,"assigned":3}`,
/// `{"class":{...}}` (`{"class":null}` when none runs), `{"error":"...","code":"busy"}`.
/// Written and read with `StatusReport`'s coder, so the class's keys are snake_case too.
public struct StatusAnswer: Sendable, Equatable, Codable {
    public var ok: Bool?
    public var assigned: Int?
    public var error: String?
    /// Set with `error` when the gateway refused (exit status 2 for `blegate class`).
    public var code: String?
    /// Whether the answer is about a class: then `class` is written even when nil.
    public var aboutClass: Bool
    public var classReport: ClassReport?

    public init(ok: Bool? = nil, assigned: Int? = nil, error: String? = nil, code: String? = nil,
                aboutClass: Bool = false, classReport: ClassReport? = nil) {
        self.ok = ok
        self.assigned = assigned
        self.error = error
        self.code = code
        self.aboutClass = aboutClass || classReport != nil
        self.classReport = classReport
    }

    static func failure(_ error: String, code: String? = nil) -> StatusAnswer { StatusAnswer(error: error, code: code) }

    enum CodingKeys: String, CodingKey { case ok, assigned, error, code, classReport = "class" }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(ok, forKey: .ok)
        try c.encodeIfPresent(assigned, forKey: .assigned)
        try c.encodeIfPresent(error, forKey: .error)
        try c.encodeIfPresent(code, forKey: .code)
        if aboutClass { try c.encode(classReport, forKey: .classReport) }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ok = try c.decodeIfPresent(Bool.self, forKey: .ok)
        assigned = try c.decodeIfPresent(Int.self, forKey: .assigned)
        error = try c.decodeIfPresent(String.self, forKey: .error)
        code = try c.decodeIfPresent(String.self, forKey: .code)
        aboutClass = c.contains(.classReport)
        classReport = try c.decodeIfPresent(ClassReport.self, forKey: .classReport)
    }

    /// One answer line, keys sorted as in every answer.
    public var line: String { StatusReport.text(self) }

    /// An answer line as the gateway wrote it.
    public init(line: String) throws {
        self = try StatusReport.decoder.decode(StatusAnswer.self, from: Data(line.utf8))
    }
}

/// Who is asking on the status socket, from the kernel (SO_PEERCRED), not from anything
/// the client says.
public struct StatusPeer: Sendable, Equatable {
    public var uid: UInt32
    public var pid: Int32

    /// Changes (pair, class commands) come only from root or the gateway's own user; any
    /// other member of the socket's group may only read.
    public var mayChange: Bool { uid == 0 || uid == geteuid() }

    public init(uid: UInt32, pid: Int32) {
        self.uid = uid
        self.pid = pid
    }

    /// A peer the kernel could not name: it may only read.
    static let nobody = StatusPeer(uid: UInt32.max - 1, pid: 0)
}

/// Serves the status socket: one request line in, one JSON line out, then close.
///
/// The socket is bound when the server is made, so a second gateway on the same socket
/// is refused before it touches anything. It is served on the process's NIO event loop
/// (the wall's), so slow or silent clients cost a channel each, not a thread: each has
/// `readDeadline` to send its line and `writeDeadline` to take the answer, at most
/// `maxConnections` are held (the oldest silent one makes room for a new one), and
/// answers are built by `handler` in tasks, at most `maxInFlight` at once.
public final class StatusServer: Service, Sendable {
    public typealias Handler = @Sendable (StatusRequest, StatusPeer) async -> String

    static let maxConnections = 512
    static let maxInFlight = 64
    static let readDeadline = TimeAmount.seconds(2)
    static let writeDeadline = TimeAmount.seconds(5)
    static let lineLimit = 65_536

    public let path: String
    private let listener: Int32
    private let handler: Handler
    private let logger: Logger
    private let loop: any EventLoop
    private let inFlight = Atomic<Int>(0)
    /// Every client channel, on `loop` only.
    private let clients: NIOLoopBoundBox<StatusClients>
    /// When the loop last ran the server's tick (monotonic ms), for the watchdog.
    private let lastTick = Atomic<Int64>(MonotonicClock.milliseconds())

    /// Binds `path` (mode 0660: the gateway's group may ask for status).
    public init(path: String, eventLoop: any EventLoop, logger: Logger, handler: @escaping Handler) throws(StatusSocketError) {
        self.path = path
        self.logger = logger
        self.handler = handler
        self.loop = eventLoop
        self.clients = NIOLoopBoundBox.makeBoxSendingValue(StatusClients(), eventLoop: eventLoop)
        self.listener = try UnixSocket.listen(path, mode: 0o660)
    }

    public func run() async throws {
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: loop)
                .serverChannelOption(.backlog, value: Int32(Self.maxConnections))
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .childChannelInitializer { [self] child in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(StatusConnection(server: self))
                    }
                }
                .withBoundSocket(listener)
                .get()
        } catch {
            // The channel owned the descriptor and closed it on failing: closing it here
            // again could close another file that took its number meanwhile.
            unlink(path)
            throw error
        }
        // The watchdog's probe: a loop that runs this tick is a loop that can answer.
        let tick = loop.scheduleRepeatedTask(initialDelay: .zero, delay: .seconds(1)) { [self] _ in
            lastTick.store(MonotonicClock.milliseconds(), ordering: .relaxed)
        }
        await withTaskCancellationOrGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onCancelOrGracefulShutdown: {
            channel.close(promise: nil)
        }
        tick.cancel()
        let loop = self.loop, clients = self.clients
        try? await loop.submit { for c in clients.value.removeAll() { c.shed() } }.get()
        unlink(path)
    }

    /// Closes the socket without running (when the gateway fails to start).
    public func discard() {
        close(listener)
        unlink(path)
    }

    /// The watchdog's probe: the event loop ran the server's tick within the last second.
    func answers(within: Duration) -> Bool {
        MonotonicClock.milliseconds() - lastTick.load(ordering: .relaxed) <= 2000 + within.milliseconds
    }

    /// A new client: held, and the oldest silent one closed when the bound is reached.
    fileprivate func opened(_ connection: StatusConnection) {
        // Closed outside the table's access: a close calls back into `closed`.
        for shed in clients.value.add(connection) { shed.shed() }
    }

    fileprivate func closed(_ connection: StatusConnection) {
        clients.value.remove(connection)
    }

    /// A client sent its line: the answer is built in a task (or given at once when the
    /// line is bad or too many answers are being built) and handed back on the loop.
    fileprivate func dispatch(_ line: [UInt8], peer: StatusPeer, answer: @escaping @Sendable (String) -> Void) {
        let request: StatusRequest
        do {
            request = try StatusRequest.parse(line)
        } catch {
            answer(StatusAnswer.failure(error.description).line)
            return
        }
        guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            answer(StatusAnswer.failure("the gateway is busy answering other clients; try again", code: "busy").line)
            return
        }
        let handler = self.handler
        Task {
            let text = await handler(request, peer)
            self.inFlight.subtract(1, ordering: .relaxed)
            answer(text)
        }
    }
}

/// The clients held, oldest first, on the server's event loop.
private struct StatusClients {
    private var open: [ObjectIdentifier: StatusConnection] = [:]

    /// Holds `connection`; returns the connections to close: the oldest silent one when
    /// the bound is reached (a flood of idle connections cannot keep `blegate status`
    /// out), or the newcomer itself when none is silent.
    mutating func add(_ connection: StatusConnection) -> [StatusConnection] {
        guard open.count >= StatusServer.maxConnections else {
            open[ObjectIdentifier(connection)] = connection
            return []
        }
        guard let oldest = open.values.filter(\.isSilent).min(by: { $0.opened < $1.opened }) else { return [connection] }
        open[ObjectIdentifier(oldest)] = nil
        open[ObjectIdentifier(connection)] = connection
        return [oldest]
    }

    mutating func remove(_ connection: StatusConnection) {
        open[ObjectIdentifier(connection)] = nil
    }

    mutating func removeAll() -> [StatusConnection] {
        defer { open.removeAll() }
        return Array(open.values)
    }
}

/// One client: reading its line (with a deadline), waiting for its answer, writing it
/// (with a deadline), then closed. Lives on the server's event loop.
private final class StatusConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case reading
        case answering
        case writing
        case done
    }

    private let server: StatusServer
    private var state = State.reading
    private var line: [UInt8] = []
    private var context: ChannelHandlerContext?
    private var deadline: Scheduled<Void>?
    let opened = MonotonicClock.nanoseconds()

    init(server: StatusServer) {
        self.server = server
    }

    /// Still waiting for its request line with none of it read.
    var isSilent: Bool { state == .reading && line.isEmpty }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        server.opened(self)
        guard state == .reading else { return }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: StatusServer.readDeadline) { loopBound.value.shed() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        state = .done
        server.closed(self)
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state == .reading else { return }
        let bytes = unwrapInboundIn(data).readableBytesView
        if let nl = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            line += bytes[..<nl]
            answer(context)
        } else {
            line += bytes
            if line.count > StatusServer.lineLimit {
                write(StatusAnswer.failure("a request is one line of at most 64 KiB").line, context)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client shut its side after a line without a newline: that line is the request.
        if let event = event as? ChannelEvent, event == .inputClosed, state == .reading {
            answer(context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        shed()
    }

    private func answer(_ context: ChannelHandlerContext) {
        state = .answering
        deadline?.cancel()
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop, server = self.server, line = self.line
        self.line = []
        Self.peer(context.channel).whenComplete { peer in
            server.dispatch(line, peer: (try? peer.get()) ?? StatusPeer.nobody) { text in
                loop.execute {
                    let connection = loopBound.value
                    guard connection.state == .answering, let context = connection.context else { return }
                    connection.write(text, context)
                }
            }
        }
    }

    private func write(_ text: String, _ context: ChannelHandlerContext) {
        state = .writing
        deadline?.cancel()
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: StatusServer.writeDeadline) { loopBound.value.shed() }
        var buffer = context.channel.allocator.buffer(capacity: text.utf8.count + 1)
        buffer.writeString(text)
        buffer.writeInteger(UInt8(ascii: "\n"))
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in loopBound.value.shed() }
    }

    /// Closes the connection (read or write deadline passed, answer sent, room needed).
    func shed() {
        deadline?.cancel()
        guard state != .done, let context else { return }
        state = .done
        context.close(promise: nil)
    }

    /// The client's uid and pid from the kernel (SO_PEERCRED); an unknown peer counts as
    /// nobody (read-only).
    static func peer(_ channel: any Channel) -> EventLoopFuture<StatusPeer> {
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(.nobody) }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel.socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        return credentials.map { StatusPeer(uid: $0.uid, pid: $0.pid) }
    }
}

/// `struct ucred` of <sys/socket.h> (Glibc does not export it).
private struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = .max - 1
    var gid: UInt32 = 0
}

/// The client side: `blegate status` and `blegate pair` asking the running gateway.
public enum StatusClient {
    /// Sends `request` and returns the answer line. Throws `StatusSocketError`; its
    /// `nobodyListening` says the gateway is not running.
    public static func ask(_ path: String, _ request: StatusRequest, timeout: Duration = .seconds(30)) throws(StatusSocketError) -> String {
        let fd = try UnixSocket.connect(path)
        defer { close(fd) }
        guard UnixSocket.writeAll(fd, Array(request.line.utf8)) else {
            throw StatusSocketError(path: path, message: "the gateway closed the connection before the request was sent")
        }
        let ms = Int32(min(timeout.milliseconds, Int64(Int32.max)))
        guard let answer = UnixSocket.readLine(fd, limit: 16 << 20, timeoutMilliseconds: ms), !answer.isEmpty else {
            throw StatusSocketError(path: path, message: "the gateway did not answer within \(timeout)")
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
