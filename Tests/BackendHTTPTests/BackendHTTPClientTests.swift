// SPDX-License-Identifier: MIT
import BackendHTTP
import NIOCore
import NIOPosix
import Testing

/// The backend client against real loopback servers that answer in each of HTTP/1's ways.
@Suite("BackendHTTP client: keep-alive, bodies, limits, deadlines", .timeLimit(.minutes(3)))
struct BackendHTTPClientTests {
    static let ok = "{\"inserted\":0,\"duplicates\":0,\"rejected\":[]}"

    func post(_ client: BackendHTTPClient, _ server: LoopbackServer, timeout: Duration = .seconds(20)) async throws(HTTPExchangeError) -> HTTPAnswer {
        var request = BackendHTTPClient.Request(url: "http://127.0.0.1:\(server.port)/api/v1/metrics")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = ByteBuffer(string: "{\"records\":[]}")
        return try await client.execute(request, timeout: timeout)
    }

    @Test("many calls share one connection (on an injected event loop), and it closes after the idle timeout")
    func keepAlive() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let client = BackendHTTPClient(eventLoopGroup: group, idleTimeout: .milliseconds(500))
        for _ in 0..<20 {
            let answer = try await post(client, server)
            #expect(answer.status == 200)
            #expect(String(buffer: answer.body) == Self.ok)
        }
        #expect(server.seenNow.requests == 20)
        #expect(server.seenNow.connections == 1)
        // The request as sent: the path, the host with its port, the body's length.
        let head = try #require(server.seenNow.heads.first).lowercased()
        #expect(head.hasPrefix("post /api/v1/metrics http/1.1"), "\(head)")
        #expect(head.contains("host: 127.0.0.1:\(server.port)"), "\(head)")
        #expect(head.contains("content-length: 14"), "\(head)")
        // Unused for 0.5 s, the client hangs up.
        #expect(await server.wait { $0.open == 0 })
        _ = try await post(client, server)
        #expect(server.seenNow.connections == 2)
        await client.shutdown()
        #expect(await server.wait { $0.open == 0 })
        await server.stop()
        try await group.shutdownGracefully()
    }

    @Test("a kept-alive connection the server closed while idle costs no failed call")
    func serverClosedIdle() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let client = BackendHTTPClient()
        _ = try await post(client, server)
        await server.closeConnections()
        #expect(await server.wait { $0.open == 0 })
        let answer = try await post(client, server)
        #expect(answer.status == 200)
        #expect(server.seenNow.connections == 2)
        await client.shutdown()
        await server.stop()
    }

    @Test("a reused connection dropped on the next request: the request goes once more on a new connection")
    func resendOnce() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok), dropReused: true)
        let client = BackendHTTPClient()
        _ = try await post(client, server)
        let answer = try await post(client, server)
        #expect(answer.status == 200)
        // The dropped request, then its resend on a second connection.
        #expect(server.seenNow.requests == 3)
        #expect(server.seenNow.connections == 2)
        await client.shutdown()
        await server.stop()
    }

    @Test("a chunked answer is read whole, and the connection is reused")
    func chunked() async throws {
        let body = Array((0..<100_000).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let server = try await LoopbackServer(.chunked(body: body, pieces: 37))
        let client = BackendHTTPClient()
        for _ in 0..<3 {
            let answer = try await post(client, server)
            #expect(Array(answer.body.readableBytesView) == body)
        }
        #expect(server.seenNow.connections == 1)
        await client.shutdown()
        await server.stop()
    }

    @Test("an answer ended by closing, and an HTTP/1.0 answer, are read whole; neither connection is reused")
    func closingAnswers() async throws {
        let body = Array("{\"inserted\":1,\"duplicates\":0}".utf8)
        for answer in [LoopbackServer.Answer.closeDelimited(body: body), .http10(body: String(decoding: body, as: UTF8.self))] {
            let server = try await LoopbackServer(answer)
            let client = BackendHTTPClient()
            for _ in 0..<2 {
                let got = try await post(client, server)
                #expect(got.status == 200)
                #expect(Array(got.body.readableBytesView) == body)
            }
            #expect(server.seenNow.connections == 2)
            await client.shutdown()
            await server.stop()
        }
    }

    @Test("a redirect is an answer, not followed")
    func redirect() async throws {
        let server = try await LoopbackServer(.sized(status: 307, body: "", extraHeaders: "Location: /elsewhere\r\n"))
        let client = BackendHTTPClient()
        let answer = try await post(client, server)
        #expect(answer.status == 307)
        #expect(answer.headers.first(name: "Location") == "/elsewhere")
        #expect(server.seenNow.requests == 1)
        await client.shutdown()
        await server.stop()
    }

    @Test("an answer over the limit fails with .answerTooLarge, declared, chunked or ended by closing",
          arguments: [0, 1, 2])
    func tooLarge(way: Int) async throws {
        let big = [UInt8](repeating: 0x20, count: (4 << 20) + 1)
        let answer: LoopbackServer.Answer = switch way {
        case 0: .sized(status: 200, body: String(decoding: big, as: UTF8.self))
        case 1: .chunked(body: big, pieces: 64)
        default: .closeDelimited(body: big)
        }
        let server = try await LoopbackServer(answer)
        let client = BackendHTTPClient()
        let error = await #expect(throws: HTTPExchangeError.self) { try await post(client, server) }
        #expect(error == .answerTooLarge(limit: 4 << 20))
        #expect(await server.wait { $0.open == 0 })
        await client.shutdown()
        await server.stop()
    }

    @Test("a body trickled a byte every 200 ms ends at the deadline, body included")
    func trickle() async throws {
        let server = try await LoopbackServer(.trickle(length: 100, every: .milliseconds(200)))
        let client = BackendHTTPClient()
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPExchangeError.self) { try await post(client, server, timeout: .seconds(1)) }
        let elapsed = ContinuousClock.now - started
        #expect(error == .deadlineExceeded)
        #expect(elapsed >= .milliseconds(950), "\(elapsed)")
        // 100 bytes would take 20 s.
        #expect(elapsed < .seconds(15), "\(elapsed)")
        #expect(await server.wait { $0.open == 0 })
        await client.shutdown()
        await server.stop()
    }

    @Test("a refused connection fails at once, with the reason")
    func refused() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let port = server.port
        await server.stop()
        let client = BackendHTTPClient()
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPExchangeError.self) {
            try await client.execute(.init(url: "http://127.0.0.1:\(port)/"), timeout: .seconds(20))
        }
        #expect(error == .connectFailed("connection refused"))
        #expect(ContinuousClock.now - started < .seconds(5))
        await client.shutdown()
    }

    @Test("URLs: scheme, host, port, path; anything else is .invalidURL")
    func urls() {
        let plain = HTTPTarget(url: "http://backend.example/api/v1/metrics")
        #expect(plain?.secure == false && plain?.host == "backend.example" && plain?.port == 80 && plain?.path == "/api/v1/metrics")
        let secure = HTTPTarget(url: "HTTPS://user:pw@[::1]:8443")
        #expect(secure?.secure == true && secure?.host == "::1" && secure?.port == 8443 && secure?.path == "/")
        #expect(HTTPTarget(url: "ftp://backend.example/") == nil)
        #expect(HTTPTarget(url: "http://:80/") == nil)
        #expect(HTTPTarget(url: "http://host:99999/") == nil)
    }
}
