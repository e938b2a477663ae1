// SPDX-License-Identifier: MIT
import Dispatch
import JSON
import Logging
import ServiceLifecycle
import Synchronization
import SystemSupport
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
        guard let text = String(validating: line, as: UTF8.self), let object = try? JSONValue.parse(text),
              case .object = object else {
            throw ParseError(description: "a request is one line of JSON, e.g. {\"command\":\"status\"}")
        }
        switch object["command"]?.stringValue {
        case "status":
            return .status
        case "pair":
            guard let address = object["address"]?.stringValue, let client = object["client_id"]?.stringValue,
                  !address.isEmpty, !client.isEmpty else {
                throw ParseError(description: "pair needs address and client_id")
            }
            return .pair(address: address, clientID: client)
        case "class":
            return .classShow
        case "class_start":
            guard let name = object["name"]?.stringValue else { throw ParseError(description: "class_start needs name") }
            return .classStart(name: name, type: object["type"]?.stringValue ?? "other")
        case "class_stop":
            return .classStop
        case let other:
            throw ParseError(description: "unknown command \(other.map { "\"\($0)\"" } ?? "(none)"); known: status, pair, class, class_start, class_stop")
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
        return GatewayRuntime.object(object.mapValues { .string($0) }) + "\n"
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
}

/// Serves the status socket: one request line in, one JSON line out, then close.
///
/// The socket is bound when the server is made, so a second gateway on the same
/// socket is refused before it touches anything. One thread waits on the socket and
/// every client with poll(2), so slow or silent clients cost a file descriptor each, not
/// a thread: each has `readDeadline` to send its line and `writeDeadline` to take the
/// answer, at most `maxConnections` are held (the oldest silent one makes room for a new
/// one), and answers are built by `handler` in tasks, at most `maxInFlight` at once.
public final class StatusServer: Service, Sendable {
    public typealias Handler = @Sendable (StatusRequest, StatusPeer) async -> String

    static let maxConnections = 512
    static let maxInFlight = 64
    static let readDeadlineMs: Int64 = 2000
    static let writeDeadlineMs: Int64 = 5000
    static let lineLimit = 65_536

    public let path: String
    private let fd: Int32
    private let handler: Handler
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    /// Answers ready to write, handed from the handler tasks to the poll thread.
    private let answers = Mutex<[(fd: Int32, bytes: [UInt8])]>([])
    private let inFlight = Atomic<Int>(0)
    /// When the poll thread last went round (monotonic ms), for the watchdog.
    let lastLoop = Atomic<Int64>(MonotonicClock.milliseconds())
    /// Wakes the poll thread when an answer is ready.
    private let wake: (read: Int32, write: Int32)

    /// Binds `path` (mode 0660: the gateway's group may ask for status).
    public init(path: String, logger: Logger, handler: @escaping Handler) throws(StatusSocketError) {
        self.path = path
        self.logger = logger
        self.handler = handler
        self.fd = try UnixSocket.listen(path, mode: 0o660)
        UnixSocket.makeNonBlocking(fd)
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else {
            close(fd)
            unlink(path)
            throw UnixSocket.error(path, "cannot make the status server's wake-up pipe")
        }
        for p in pipeFDs { UnixSocket.makeNonBlocking(p) }
        wake = (pipeFDs[0], pipeFDs[1])
    }

    public func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let serve: @Sendable () -> Void = { [self] in
                    var loop = StatusConnections(listener: fd, wake: wake.read)
                    loop.run(self)
                    done.resume()
                }
                // Without a thread of its own the loop still serves, holding one of the
                // concurrency pool's threads.
                if DetachedThread.start(name: "blegate-status", serve) != 0 { serve() }
            }
        } onCancelOrGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            self.poke()
        }
        close(fd)
        close(wake.read)
        close(wake.write)
        unlink(path)
    }

    /// Closes the socket without running (when the gateway fails to start).
    public func discard() {
        close(fd)
        close(wake.read)
        close(wake.write)
        unlink(path)
    }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// The watchdog's probe: the poll thread goes round at least once a second.
    func answers(within: Duration) -> Bool {
        MonotonicClock.milliseconds() - lastLoop.load(ordering: .relaxed) <= 2000 + within.milliseconds
    }

    private func poke() {
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }

    /// A client sent its line: answer it in a task (or at once when the line is bad or
    /// too many answers are being built).
    func dispatch(_ client: Int32, line: [UInt8], peer: StatusPeer) {
        let request: StatusRequest
        do {
            request = try StatusRequest.parse(line)
        } catch {
            finish(client, GatewayRuntime.object(["error": .string(error.description)]))
            return
        }
        guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            finish(client, GatewayRuntime.object(["error": .string("the gateway is busy answering other clients; try again"), "code": .string("busy")]))
            return
        }
        let handler = self.handler
        Task {
            let answer = await handler(request, peer)
            self.inFlight.subtract(1, ordering: .relaxed)
            self.finish(client, answer)
        }
    }

    private func finish(_ client: Int32, _ answer: String) {
        answers.withLock { $0.append((client, Array(answer.utf8) + [10])) }
        poke()
    }

    func takeAnswers() -> [(fd: Int32, bytes: [UInt8])] {
        answers.withLock { a in
            defer { a.removeAll() }
            return a
        }
    }
}

/// The poll loop of the status thread: the listening socket, the wake-up pipe, and each
/// client in one of three states.
struct StatusConnections {
    enum State {
        case reading([UInt8])
        case answering
        case writing([UInt8], offset: Int)
    }

    struct Client {
        var state: State
        var deadline: Int64
        var peer: StatusPeer
        var opened: Int64
    }

    let listener: Int32
    let wake: Int32
    var clients: [Int32: Client] = [:]

    init(listener: Int32, wake: Int32) {
        self.listener = listener
        self.wake = wake
    }

    mutating func run(_ server: StatusServer) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !server.isStopping {
            server.lastLoop.store(MonotonicClock.milliseconds(), ordering: .relaxed)
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            var nearest = MonotonicClock.milliseconds() + 1000
            for (fd, c) in clients {
                switch c.state {
                case .reading: fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
                case .writing: fds.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0))
                case .answering: continue
                }
                nearest = min(nearest, c.deadline)
            }
            let timeout = Int32(max(0, min(1000, nearest - MonotonicClock.milliseconds())))
            let n = poll(&fds, nfds_t(fds.count), timeout)
            if n < 0, errno != EINTR { return }
            if fds[1].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 256)
                while Glibc.read(wake, &sink, sink.count) > 0 {}
            }
            for answer in server.takeAnswers() {
                guard clients[answer.fd] != nil else { continue }
                clients[answer.fd]!.state = .writing(answer.bytes, offset: 0)
                clients[answer.fd]!.deadline = MonotonicClock.milliseconds() + StatusServer.writeDeadlineMs
                writeClient(answer.fd)
            }
            if fds[0].revents != 0 { acceptAll(&chunk, server) }
            for p in fds.dropFirst(2) where p.revents != 0 {
                guard let c = clients[p.fd] else { continue }
                switch c.state {
                case let .reading(buffer): readClient(p.fd, buffer, &chunk, server)
                case .writing: writeClient(p.fd)
                case .answering: break
                }
            }
            let now = MonotonicClock.milliseconds()
            for (fd, c) in clients where c.deadline <= now {
                if case .answering = c.state { continue }
                drop(fd)
            }
        }
        for fd in clients.keys { close(fd) }
    }

    private mutating func acceptAll(_ chunk: inout [UInt8], _ server: StatusServer) {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            UnixSocket.makeNonBlocking(client)
            // The oldest client still silent makes room: a flood of idle connections cannot
            // keep `blegate status` out. Silent once what it sent is read: a client accepted
            // earlier in this same burst has had no read yet, and its request line may
            // already be waiting.
            while clients.count >= StatusServer.maxConnections {
                var oldest: (fd: Int32, buffer: [UInt8], opened: Int64)?
                for (fd, c) in clients {
                    if case let .reading(buffer) = c.state, c.opened < oldest?.opened ?? .max { oldest = (fd, buffer, c.opened) }
                }
                guard let oldest else { break }
                readClient(oldest.fd, oldest.buffer, &chunk, server)
                if case .reading = clients[oldest.fd]?.state { drop(oldest.fd) }
            }
            if clients.count >= StatusServer.maxConnections {
                close(client)
                continue
            }
            let now = MonotonicClock.milliseconds()
            clients[client] = Client(state: .reading([]), deadline: now + StatusServer.readDeadlineMs,
                                     peer: Self.peer(client), opened: now)
        }
    }

    private mutating func readClient(_ fd: Int32, _ buffer: [UInt8], _ chunk: inout [UInt8], _ server: StatusServer) {
        var buffer = buffer
        let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            drop(fd)
            return
        }
        let end = n == 0
        if n > 0 { buffer += chunk[0..<n] }
        if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            buffer.removeSubrange(nl...)
        } else if !end {
            guard buffer.count <= StatusServer.lineLimit else {
                clients[fd]!.state = .writing(Array(GatewayRuntime.object(["error": .string("a request is one line of at most 64 KiB")]).utf8) + [10], offset: 0)
                writeClient(fd)
                return
            }
            clients[fd]!.state = .reading(buffer)
            return
        }
        clients[fd]!.state = .answering
        server.dispatch(fd, line: buffer, peer: clients[fd]!.peer)
    }

    private mutating func writeClient(_ fd: Int32) {
        guard case let .writing(bytes, offset) = clients[fd]?.state else { return }
        var sent = offset
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    clients[fd]!.state = .writing(bytes, offset: sent)
                    return
                }
                break
            }
            sent += n
        }
        drop(fd)
    }

    private mutating func drop(_ fd: Int32) {
        clients[fd] = nil
        close(fd)
    }

    /// The client's uid and pid; an unknown peer counts as nobody (read-only).
    static func peer(_ fd: Int32) -> StatusPeer {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc does not export it).
        var cred: (Int32, UInt32, UInt32) = (0, UInt32.max - 1, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: cred))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 else { return StatusPeer(uid: UInt32.max - 1, pid: 0) }
        return StatusPeer(uid: cred.1, pid: cred.0)
    }
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
