// SPDX-License-Identifier: MIT
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

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
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            throw ParseError(description: "a request is one line of JSON, e.g. {\"command\":\"status\"}")
        }
        switch object["command"] as? String {
        case "status":
            return .status
        case "pair":
            guard let address = object["address"] as? String, let client = object["client_id"] as? String,
                  !address.isEmpty, !client.isEmpty else {
                throw ParseError(description: "pair needs address and client_id")
            }
            return .pair(address: address, clientID: client)
        case "class":
            return .classShow
        case "class_start":
            guard let name = object["name"] as? String else { throw ParseError(description: "class_start needs name") }
            return .classStart(name: name, type: object["type"] as? String ?? "other")
        case "class_stop":
            return .classStop
        case let other:
            throw ParseError(description: "unknown command \(other.map { "\"\($0)\"" } ?? "(none)"); known: status, pair, class, class_start, class_stop")
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
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// Serves the status socket: one request line in, one JSON line out, then close.
///
/// The socket is bound when the server is made, so a second gateway on the same
/// socket is refused before it touches anything. Accepting and reading happen on a
/// plain thread (blocking calls stay off the cooperative pool); answers are built by
/// `handler` in a task.
public final class StatusServer: Service, Sendable {
    public typealias Handler = @Sendable (StatusRequest) async -> String

    public let path: String
    private let fd: Int32
    private let handler: Handler
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)

    /// Binds `path` (mode 0660: the gateway's group may ask for status).
    public init(path: String, logger: Logger, handler: @escaping Handler) throws(StatusSocketError) {
        self.path = path
        self.logger = logger
        self.handler = handler
        self.fd = try UnixSocket.listen(path, mode: 0o660)
    }

    public func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    acceptLoop()
                    done.resume()
                }
                thread.name = "blegate-status"
                thread.start()
            }
        } onCancelOrGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
        }
        close(fd)
        unlink(path)
    }

    /// Closes the socket without running (when the gateway fails to start).
    public func discard() {
        close(fd)
        unlink(path)
    }

    private func acceptLoop() {
        while !stopping.load(ordering: .relaxed) {
            guard UnixSocket.readable(fd, timeoutMilliseconds: 200) else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            DispatchQueue.global().async { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        guard let line = UnixSocket.readLine(client, limit: 65_536, timeoutMilliseconds: 2000) else {
            close(client)
            return
        }
        let request: StatusRequest
        do {
            request = try StatusRequest.parse(line)
        } catch {
            let reply = (try? JSONSerialization.data(withJSONObject: ["error": error.description])) ?? Data()
            UnixSocket.writeAll(client, Array(reply) + [10])
            close(client)
            return
        }
        let handler = self.handler
        Task {
            let reply = await handler(request)
            UnixSocket.writeAll(client, Array(reply.utf8) + [10])
            close(client)
        }
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
        let ms = Int32(min(timeout.components.seconds * 1000, Int64(Int32.max)))
        guard let answer = UnixSocket.readLine(fd, limit: 16 << 20, timeoutMilliseconds: ms), !answer.isEmpty else {
            throw StatusSocketError(path: path, message: "the gateway did not answer within \(timeout)")
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
