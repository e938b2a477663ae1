// SPDX-License-Identifier: MIT
import Sync
import Testing

/// Backends that misbehave below HTTP's surface (`MisbehavingBackend`, real HTTP on
/// loopback): the whole exchange, body included, sits under the request timeout, and an
/// oversized answer or a redirect is named for what it is.
@Suite("Backend deadlines, oversized answers and redirects", .timeLimit(.minutes(3)))
struct BackendDeadlineTests {
    static let token = "t0ken-deadline-9"

    func with(_ answer: MisbehavingBackend.Answer, timeout: Duration,
              _ body: (MisbehavingBackend, BackendClient) async throws -> Void) async throws {
        try await MisbehavingBackend.with(answer, token: Self.token, timeout: timeout, body)
    }

    @Test("a body trickled a byte a second ends at the request timeout, body included, and the connection is dropped")
    func trickle() async throws {
        // 200 bytes at 1 byte/s would hold sync for over 3 minutes; the timeout is 3 s.
        try await with(.trickle(length: 200), timeout: .seconds(3)) { server, client in
            let started = ContinuousClock.now
            let error = await #expect(throws: BackendError.self) {
                try await client.postMetrics(gatewayID: "gym-1", records: [])
            }
            let elapsed = ContinuousClock.now - started
            #expect(error?.kind == .timeout, "\(String(describing: error))")
            #expect(error?.message == "backend \(client.metricsURL) did not answer within 3s (its whole answer, body included)",
                    "\(String(describing: error))")
            // The head and part of the body had arrived: the deadline struck while reading it.
            #expect(server.observed.requests == 1)
            #expect(server.observed.bodyBytesSent >= 1)
            // Ended by the deadline, not by the body (200 s): 3 s, with a wide margin for a
            // loaded machine.
            #expect(elapsed >= .milliseconds(2900), "\(elapsed)")
            #expect(elapsed < .seconds(40), "\(elapsed)")
            // The client gave the connection up instead of leaving it open.
            let hungUp = await server.wait(timeout: 30) { $0.clientHungUp }
            #expect(hungUp)
            #expect(server.observed.bodyBytesSent < 20)
        }
    }

    @Test("an answer over 4 MiB is refused with the limit named, declared or not",
          arguments: [true, false])
    func oversized(declared: Bool) async throws {
        // 64 MiB: more than the loopback socket buffers take, so a client that kept reading
        // would be seen doing so.
        let bytes = 64 << 20
        try await with(.oversized(bytes: bytes, declared: declared), timeout: .seconds(30)) { server, client in
            let started = ContinuousClock.now
            let error = await #expect(throws: BackendError.self) {
                try await client.postMetrics(gatewayID: "gym-1", records: [])
            }
            #expect(error?.kind == .invalidResponse, "\(String(describing: error))")
            #expect(error?.message == "backend \(client.metricsURL) answered with more than 4 MiB; an answer is a few counts",
                    "\(String(describing: error))")
            #expect(ContinuousClock.now - started < .seconds(30))
            // Not read to the end: the client stopped at the limit and hung up.
            let hungUp = await server.wait(timeout: 30) { $0.clientHungUp }
            #expect(hungUp)
            #expect(server.observed.bodyBytesSent < bytes)
        }
    }

    @Test("a redirect is named with its target, credentials hidden, and not followed")
    func redirect() async throws {
        let location = "http://gym:s3cret-pw@127.0.0.1:{port}/api/v2/metrics"
        try await with(.redirect(status: 307, location: location), timeout: .seconds(10)) { server, client in
            let error = await #expect(throws: BackendError.self) {
                try await client.postMetrics(gatewayID: "gym-1", records: [])
            }
            #expect(error?.status == 307)
            #expect(error?.kind == .unexpectedStatus)
            #expect(error?.message == "backend \(client.metricsURL) redirects (307) to http://***@127.0.0.1:\(server.port)/api/v2/metrics; "
                + "blegate does not follow redirects with health data: set backend.url to the address it names",
                    "\(String(describing: error))")
            #expect(error?.message.contains("s3cret") == false)
            // Following it would have come back to this server.
            #expect(server.observed.requests == 1)
        }
    }
}
