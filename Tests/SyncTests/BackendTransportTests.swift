// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import NIOCore
import NIOPosix
import Sync
import Testing

/// `BackendClient` over AsyncHTTPClient against raw loopback servers that answer in each of
/// HTTP/1's ways: keep-alive, bodies, limits, refused connections, and TLS.
@Suite("Backend client transport: keep-alive, bodies, limits, TLS", .timeLimit(.minutes(3)))
struct BackendTransportTests {
    static let ok = "{\"inserted\":0,\"duplicates\":0,\"rejected\":[]}"
    static let token = "t0ken-transport-7"

    func client(_ url: String, requestTimeout: Duration = .seconds(20), connectTimeout: Duration = .seconds(10),
                trust: TLSTrust = .system, httpClient: HTTPClient? = nil) throws -> BackendClient {
        try BackendClient(baseURL: url, token: TokenStore(token: Self.token), requestTimeout: requestTimeout,
                          connectTimeout: connectTimeout, trust: trust, httpClient: httpClient)
    }

    @discardableResult
    func post(_ client: BackendClient) async throws(BackendError) -> MetricsResult {
        try await client.postMetrics(gatewayID: "gym-1", records: [])
    }

    @Test("many calls share one connection, on an injected event loop; the request as sent")
    func keepAlive() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let http = BackendTransport.makeClient(eventLoopGroup: group)
        let client = try client("http://127.0.0.1:\(server.port)/", httpClient: http)
        for _ in 0..<20 {
            let result = try await post(client)
            #expect(result.status == 200 && result.inserted == 0)
        }
        #expect(server.seenNow.requests == 20)
        #expect(server.seenNow.connections == 1)
        // The request as sent: the path, the host with its port, a gzip body with its length, the token.
        let head = try #require(server.seenNow.heads.first).lowercased()
        #expect(head.hasPrefix("post /api/v1/metrics http/1.1"), "\(head)")
        #expect(head.contains("host: 127.0.0.1:\(server.port)"), "\(head)")
        #expect(head.contains("content-encoding: gzip"), "\(head)")
        #expect(head.contains("content-length: "), "\(head)")
        #expect(head.contains("authorization: bearer \(Self.token)"), "\(head)")
        // Shutting the client down closes its connection.
        try await http.shutdown()
        #expect(await server.wait { $0.open == 0 })
        await server.stop()
        try await group.shutdownGracefully()
    }

    @Test("a connection unused for the idle timeout is closed by the client; the next call opens another")
    func idleTimeout() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let http = BackendTransport.makeClient(idleTimeout: .milliseconds(500))
        let client = try client("http://127.0.0.1:\(server.port)/", httpClient: http)
        try await post(client)
        #expect(server.seenNow.connections == 1)
        #expect(await server.wait { $0.open == 0 })
        try await post(client)
        #expect(server.seenNow.connections == 2)
        try await http.shutdown()
        await server.stop()
    }

    @Test("a kept-alive connection the server closed while idle costs no failed call")
    func serverClosedIdle() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let client = try client("http://127.0.0.1:\(server.port)/")
        try await post(client)
        await server.closeConnections()
        #expect(await server.wait { $0.open == 0 })
        #expect(try await post(client).status == 200)
        #expect(server.seenNow.connections == 2)
        try await client.shutdown()
        await server.stop()
    }

    @Test("a reused connection dropped on the next request: the request goes once more on a new connection")
    func resendOnce() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok), dropReused: true)
        let client = try client("http://127.0.0.1:\(server.port)/")
        try await post(client)
        #expect(try await post(client).status == 200)
        // The dropped request, then its resend on a second connection.
        #expect(server.seenNow.requests == 3)
        #expect(server.seenNow.connections == 2)
        try await client.shutdown()
        await server.stop()
    }

    @Test("a chunked answer is read whole, and the connection is reused")
    func chunked() async throws {
        // The counts, then 100 000 bytes of JSON whitespace, in 37 chunks.
        let body = Array(Self.ok.utf8) + [UInt8](repeating: 0x20, count: 100_000)
        let server = try await LoopbackServer(.chunked(body: body, pieces: 37))
        let client = try client("http://127.0.0.1:\(server.port)/")
        for _ in 0..<3 {
            #expect(try await post(client).status == 200)
        }
        #expect(server.seenNow.connections == 1)
        try await client.shutdown()
        await server.stop()
    }

    @Test("an answer ended by closing, and an HTTP/1.0 answer, are read whole; neither connection is reused")
    func closingAnswers() async throws {
        for answer in [LoopbackServer.Answer.closeDelimited(body: Array(Self.ok.utf8)), .http10(body: Self.ok)] {
            let server = try await LoopbackServer(answer)
            let client = try client("http://127.0.0.1:\(server.port)/")
            for _ in 0..<2 {
                #expect(try await post(client).status == 200)
            }
            #expect(server.seenNow.connections == 2)
            try await client.shutdown()
            await server.stop()
        }
    }

    @Test("a chunked answer over 4 MiB is refused as it arrives, and the connection dropped")
    func tooLargeChunked() async throws {
        // 64 MiB: more than the loopback socket buffers take, so the answer cannot have
        // arrived whole before the client stops reading.
        let big = [UInt8](repeating: 0x20, count: 64 << 20)
        let server = try await LoopbackServer(.chunked(body: big, pieces: 64))
        let client = try client("http://127.0.0.1:\(server.port)/")
        let error = await #expect(throws: BackendError.self) { try await post(client) }
        #expect(error?.kind == .invalidResponse)
        #expect(error?.message == "backend \(client.metricsURL) answered with more than 4 MiB; an answer is a few counts",
                "\(String(describing: error))")
        #expect(await server.wait { $0.open == 0 })
        try await client.shutdown()
        await server.stop()
    }

    @Test("a refused connection fails at once as unreachable, with the reason")
    func refused() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let port = server.port
        await server.stop()
        // A connect timeout far beyond anything a busy test machine adds: a client that
        // retried the refused connection until it expired would take the full minute.
        let client = try client("http://127.0.0.1:\(port)/", requestTimeout: .seconds(120), connectTimeout: .seconds(60))
        let started = ContinuousClock.now
        let error = await #expect(throws: BackendError.self) { try await post(client) }
        #expect(error?.kind == .unreachable)
        #expect(error?.message == "backend \(client.metricsURL) unreachable: connection refused", "\(String(describing: error))")
        #expect(ContinuousClock.now - started < .seconds(30))
        try await client.shutdown()
    }

    @Test("after shutdown a call fails as unreachable, and shutting down twice is harmless")
    func afterShutdown() async throws {
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let client = try client("http://127.0.0.1:\(server.port)/")
        try await post(client)
        try await client.shutdown()
        try await client.shutdown()
        #expect(await server.wait { $0.open == 0 })
        let error = await #expect(throws: BackendError.self) { try await post(client) }
        #expect(error?.kind == .unreachable)
        await server.stop()
    }

    // MARK: TLS

    func withTLSServer(_ body: (LoopbackServer, TestCertificate) async throws -> Void) async throws {
        let certificate = try await TestCertificate(subjectAltName: "DNS:localhost")
        defer { certificate.remove() }
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok), tls: (certificate.certificate, certificate.key))
        do {
            try await body(server, certificate)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("https with the test's certificate as the trusted root: answers, over one kept-alive connection")
    func trusted() async throws {
        try await withTLSServer { server, certificate in
            let client = try client("https://localhost:\(server.port)/", trust: .pemFile(certificate.certificate))
            for _ in 0..<3 {
                #expect(try await post(client).status == 200)
            }
            #expect(server.seenNow.requests == 3)
            #expect(server.seenNow.connections == 1)
            try await client.shutdown()
        }
    }

    @Test("a certificate the system does not trust is unreachable with a TLS reason that says so, and nothing is sent")
    func untrusted() async throws {
        try await withTLSServer { server, _ in
            let client = try client("https://localhost:\(server.port)/")
            let error = await #expect(throws: BackendError.self) { try await post(client) }
            #expect(error?.kind == .unreachable)
            #expect(error?.message.contains("unreachable: TLS: the backend's certificate is not trusted") == true,
                    "\(String(describing: error))")
            #expect(server.seenNow.requests == 0)
            try await client.shutdown()
        }
    }

    @Test("a trusted certificate for another name fails the host name check")
    func wrongHost() async throws {
        try await withTLSServer { server, certificate in
            let client = try client("https://127.0.0.1:\(server.port)/", trust: .pemFile(certificate.certificate))
            let error = await #expect(throws: BackendError.self) { try await post(client) }
            #expect(error?.kind == .unreachable)
            #expect(error?.message.contains("TLS: the backend's certificate is not for this host name") == true,
                    "\(String(describing: error))")
            #expect(server.seenNow.requests == 0)
            try await client.shutdown()
        }
    }

    @Test("a server that never answers the TLS handshake ends at the connect timeout, not the request timeout")
    func silentHandshake() async throws {
        // A plain HTTP server waits for a request head that TLS's hello never completes.
        let server = try await LoopbackServer(.sized(status: 200, body: Self.ok))
        let client = try client("https://127.0.0.1:\(server.port)/", requestTimeout: .seconds(30), connectTimeout: .seconds(1))
        let started = ContinuousClock.now
        let error = await #expect(throws: BackendError.self) { try await post(client) }
        let elapsed = ContinuousClock.now - started
        #expect(error?.kind == .unreachable)
        #expect(error?.message == "backend \(client.metricsURL) unreachable: no connection within the connect timeout",
                "\(String(describing: error))")
        #expect(elapsed >= .milliseconds(950) && elapsed < .seconds(15), "\(elapsed)")
        #expect(await server.wait { $0.open == 0 })
        try await client.shutdown()
        await server.stop()
    }
}
