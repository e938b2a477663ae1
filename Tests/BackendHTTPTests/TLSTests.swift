// SPDX-License-Identifier: MIT
import BackendHTTP
import NIOCore
import Testing

/// https through NIOSSL against a loopback TLS server with a certificate made for the test.
@Suite("BackendHTTP client over TLS", .timeLimit(.minutes(3)))
struct TLSTests {
    func withTLSServer(_ body: (LoopbackServer, TestCertificate) async throws -> Void) async throws {
        let certificate = try await TestCertificate(subjectAltName: "DNS:localhost")
        defer { certificate.remove() }
        let server = try await LoopbackServer(.sized(status: 200, body: BackendHTTPClientTests.ok),
                                              tls: (certificate.certificate, certificate.key))
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
            let client = BackendHTTPClient(trust: .pemFile(certificate.certificate))
            for _ in 0..<3 {
                let answer = try await client.execute(.init(url: "https://localhost:\(server.port)/api/v1/metrics",
                                                            body: ByteBuffer(string: "{}")), timeout: .seconds(20))
                #expect(answer.status == 200)
                #expect(String(buffer: answer.body) == BackendHTTPClientTests.ok)
            }
            #expect(server.seenNow.requests == 3)
            #expect(server.seenNow.connections == 1)
            await client.shutdown()
        }
    }

    @Test("a certificate the system does not trust fails with a TLS error that says so, and sends nothing")
    func untrusted() async throws {
        try await withTLSServer { server, _ in
            let client = BackendHTTPClient()
            let error = await #expect(throws: HTTPExchangeError.self) {
                try await client.execute(.init(url: "https://localhost:\(server.port)/api/v1/metrics"), timeout: .seconds(20))
            }
            guard case let .tls(reason) = error else {
                Issue.record("not a TLS error: \(String(describing: error))")
                return
            }
            #expect(reason.contains("certificate is not trusted"), "\(reason)")
            #expect(server.seenNow.requests == 0)
            await client.shutdown()
        }
    }

    @Test("a trusted certificate for another name fails the host name check")
    func wrongHost() async throws {
        try await withTLSServer { server, certificate in
            let client = BackendHTTPClient(trust: .pemFile(certificate.certificate))
            let error = await #expect(throws: HTTPExchangeError.self) {
                try await client.execute(.init(url: "https://127.0.0.1:\(server.port)/api/v1/metrics"), timeout: .seconds(20))
            }
            guard case let .tls(reason) = error else {
                Issue.record("not a TLS error: \(String(describing: error))")
                return
            }
            #expect(reason.contains("not for this host name"), "\(reason)")
            #expect(server.seenNow.requests == 0)
            await client.shutdown()
        }
    }

    @Test("a server that never answers the TLS handshake ends at the connect timeout")
    func silentHandshake() async throws {
        // A plain HTTP server waits for a request head that TLS's hello never completes.
        let server = try await LoopbackServer(.sized(status: 200, body: BackendHTTPClientTests.ok))
        let client = BackendHTTPClient(connectTimeout: .seconds(1))
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPExchangeError.self) {
            try await client.execute(.init(url: "https://127.0.0.1:\(server.port)/api/v1/metrics"), timeout: .seconds(30))
        }
        let elapsed = ContinuousClock.now - started
        #expect(error == .connectTimeout)
        #expect(elapsed >= .milliseconds(950) && elapsed < .seconds(15), "\(elapsed)")
        #expect(await server.wait { $0.open == 0 })
        await client.shutdown()
        await server.stop()
    }
}
