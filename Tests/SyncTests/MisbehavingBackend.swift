// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Sync

/// A loopback HTTP/1.1 server that answers every request in one wrong way, below what the
/// test backend can do: a body trickled a byte a second, a body larger than any answer,
/// a redirect.
///
/// Each connection has its own thread, reads the whole request (head and body) before
/// answering, writes with `MSG_NOSIGNAL` and notices at once when the client hangs up
/// (`poll` with `POLLRDHUP` between trickled bytes), so a client giving up ends the
/// connection's thread instead of leaving it writing into a closed socket. `stop()` shuts
/// every socket down (which wakes a blocked `accept` or `recv`) and waits for the threads.
final class MisbehavingBackend: Sendable {
    enum Answer: Sendable {
        /// 200 with `Content-Length: length`, then one byte a second.
        case trickle(length: Int)
        /// 200 with `bytes` of body, declared in `Content-Length` or ended by closing.
        case oversized(bytes: Int, declared: Bool)
        /// `status` with this `Location` (`{port}` is replaced by the server's port).
        case redirect(status: Int, location: String)
        /// `status` with this JSON body, to every request on the connection: a backend
        /// that says what it likes (hostile texts in its answers).
        case json(status: Int, body: String)
    }

    struct Observed: Sendable {
        var requests = 0
        var bodyBytesSent = 0
        var clientHungUp = false
    }

    private struct State {
        var stopped = false
        var connections: Set<Int32> = []
        var threads = 0
        var observed = Observed()
    }

    let port: Int
    let answer: Answer
    private let listener: Int32
    private let state = Mutex(State())

    init(_ answer: Answer) throws {
        self.answer = answer
        let (fd, port) = try boundLoopbackSocket()
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw TestSupportError("listen on loopback: \(String(cString: strerror(errno)))")
        }
        listener = fd
        self.port = Int(port)
        spawn { self.acceptLoop() }
    }

    var url: String { "http://127.0.0.1:\(port)/" }

    var observed: Observed { state.withLock { $0.observed } }

    /// Waits (up to `timeout`) until `condition` holds for what the server saw.
    func wait(timeout: Double, until condition: (Observed) -> Bool) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(20)) { condition(observed) }
    }

    /// Shuts every socket down and waits (up to 10 s) for the threads to end.
    func stop() async {
        let open = state.withLock { s -> Set<Int32> in
            s.stopped = true
            return s.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        _ = await eventually(timeout: 10, every: .milliseconds(10)) { state.withLock { $0.threads } == 0 }
        close(listener)
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.threads += 1 }
        let thread = Thread { [self] in
            body()
            state.withLock { $0.threads -= 1 }
        }
        thread.start()
    }

    private func acceptLoop() {
        while !stopped {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let admitted = state.withLock { s -> Bool in
                guard !s.stopped else { return false }
                s.connections.insert(fd)
                return true
            }
            guard admitted else {
                close(fd)
                return
            }
            spawn { self.serve(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { _ = $0.connections.remove(fd) }
            close(fd)
        }
        guard readRequest(fd) else { return }
        state.withLock { $0.observed.requests += 1 }
        switch answer {
        case let .trickle(length):
            guard send(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n") else { return }
            for _ in 0..<length {
                if clientHungUp(fd, waitingMilliseconds: 1000) || stopped { return }
                guard send(fd, " ") else { return }
                state.withLock { $0.observed.bodyBytesSent += 1 }
            }
        case let .oversized(bytes, declared):
            let length = declared ? "Content-Length: \(bytes)\r\n" : "Connection: close\r\n"
            guard send(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\(length)\r\n") else { return }
            let chunk = [UInt8](repeating: 0x20, count: 64 << 10)
            var sent = 0
            while sent < bytes, !stopped {
                let n = min(chunk.count, bytes - sent)
                guard sendBytes(fd, chunk[0..<n]) else { return }
                sent += n
                state.withLock { $0.observed.bodyBytesSent = sent }
            }
            // All of it went into the socket buffers: wait for the client to hang up.
            while !clientHungUp(fd, waitingMilliseconds: 1000), !stopped {}
        case let .json(status, body):
            repeat {
                let bytes = Array(body.utf8)
                guard send(fd, "HTTP/1.1 \(status) Answer\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\n\r\n"),
                      sendBytes(fd, bytes[...]), readRequest(fd) else { return }
                state.withLock { $0.observed.requests += 1 }
            } while !stopped
        case let .redirect(status, location):
            let target = location.replacingOccurrences(of: "{port}", with: String(port))
            // Every request on the connection gets the redirect (a client following it to
            // this server would come back here, and be counted), until the client closes.
            repeat {
                guard send(fd, "HTTP/1.1 \(status) Redirect\r\nLocation: \(target)\r\nContent-Length: 0\r\n\r\n"),
                      readRequest(fd) else { return }
                state.withLock { $0.observed.requests += 1 }
            } while !stopped
        }
    }

    /// The head, then as many body bytes as `Content-Length` says. False when the client
    /// closed first.
    private func readRequest(_ fd: Int32) -> Bool {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var bodyLength = 0
        while true {
            if let end = headEnd, data.count >= end + bodyLength { return true }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            data += buffer[0..<n]
            if headEnd == nil, let r = firstRange(of: separator, in: data) {
                headEnd = r
                let head = String(decoding: data[0..<r], as: UTF8.self).lowercased()
                for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                    bodyLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
    }

    /// Index just past the first `needle` in `data`.
    private func firstRange(of needle: [UInt8], in data: [UInt8]) -> Int? {
        guard data.count >= needle.count else { return nil }
        for i in 0...(data.count - needle.count) where data[i..<(i + needle.count)].elementsEqual(needle) {
            return i + needle.count
        }
        return nil
    }

    /// Linux's `POLLRDHUP` (the peer closed its side), which Glibc's module leaves out.
    private static let pollReadHangUp: Int16 = 0x2000

    /// True once the client has closed its side (or reset); waits up to the given time.
    private func clientHungUp(_ fd: Int32, waitingMilliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN) | Self.pollReadHangUp, revents: 0)
        let r = poll(&p, 1, waitingMilliseconds)
        guard r > 0 else { return false }
        guard p.revents & (Self.pollReadHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0 else { return false }
        state.withLock { $0.observed.clientHungUp = true }
        return true
    }

    private func send(_ fd: Int32, _ text: String) -> Bool { sendBytes(fd, Array(text.utf8)[...]) }

    private func sendBytes(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                if errno == EPIPE || errno == ECONNRESET { state.withLock { $0.observed.clientHungUp = true } }
                return false
            }
            offset += n
        }
        return true
    }
}

extension MisbehavingBackend {
    /// Runs `body` against a server giving `answer` and a client of it with `token`,
    /// stopping both whatever happens.
    static func with(_ answer: Answer, token: String, timeout: Duration,
                     _ body: (MisbehavingBackend, BackendClient) async throws -> Void) async throws {
        let server = try MisbehavingBackend(answer)
        let client = try BackendClient(baseURL: server.url, token: TokenStore(token: token), requestTimeout: timeout,
                                       connectTimeout: .seconds(5))
        do {
            try await body(server, client)
        } catch {
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        await server.stop()
    }
}
