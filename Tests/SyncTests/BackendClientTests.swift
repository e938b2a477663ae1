// SPDX-License-Identifier: MIT
import Sync
import TestBackend
import Testing

@Suite("BackendClient pairing and errors")
struct BackendClientTests {
    private func withBackend(codes: [String] = ["ABC123"], _ body: (TestBackend, BackendClient) async throws -> Void) async throws {
        let backend = try TestBackend(.init(token: Harness.token, pairingCodes: codes))
        try await backend.start()
        let client = try BackendClient(baseURL: backend.baseURL + "/", token: TokenStore(token: Harness.token))
        do {
            try await body(backend, client)
        } catch {
            Issue.record(error)
        }
        try await client.shutdown()
        await backend.stop()
    }

    @Test("pairing: a valid code yields a client id the backend remembers; gzip was sent")
    func pairSuccess() async throws {
        try await withBackend { backend, client in
            let device = PairingDevice(address: "A0:9E:1A:12:34:56", name: "Polar H10 12345678", model: "H10")
            let clientID = try await client.pair(code: "ABC123", device: device)
            #expect(!clientID.isEmpty)
            let pairing = backend.store.pairings.first
            #expect(pairing?.clientID == clientID)
            #expect(pairing?.device["address"]?.string == "A0:9E:1A:12:34:56")
            #expect(pairing?.device["model"]?.string == "H10")
            #expect(backend.store.requests.first?.gzip == true)
        }
    }

    @Test("pairing: an unknown code is .unknownCode with a message naming the code")
    func pairUnknownCode() async throws {
        try await withBackend { _, client in
            let error = await #expect(throws: BackendError.self) {
                _ = try await client.pair(code: "ZZZ999", device: PairingDevice(address: "A0:9E:1A:12:34:56"))
            }
            #expect(error?.kind == .unknownCode)
            #expect(error?.status == 404)
            #expect(error?.message.contains("ZZZ999") == true)
            // What is true of letter case: the gateway sends the code as typed, and only
            // blegate-server is known to ignore case (the test backend does not).
            #expect(error?.message.contains("sent as typed") == true && error?.message.contains("case-sensitive") == false,
                    "\(error?.message ?? "")")
        }
    }

    @Test("pairing: a code works once; the second use is .codeAlreadyUsed")
    func pairCodeUsedTwice() async throws {
        try await withBackend { _, client in
            _ = try await client.pair(code: "ABC123", device: PairingDevice(address: "A0:9E:1A:12:34:56"))
            let error = await #expect(throws: BackendError.self) {
                _ = try await client.pair(code: "ABC123", device: PairingDevice(address: "A0:9E:1A:65:43:21"))
            }
            #expect(error?.kind == .codeAlreadyUsed)
            #expect(error?.message.contains("already used") == true)
        }
    }

    @Test("pairing: backend down is .unreachable, with the URL in the message")
    func pairBackendDown() async throws {
        let closed = try ClosedPort()
        let url = closed.url
        let client = try BackendClient(baseURL: url, token: TokenStore(token: Harness.token), connectTimeout: .seconds(10))
        let error = await #expect(throws: BackendError.self) {
            _ = try await client.pair(code: "ABC123", device: PairingDevice(address: "A0:9E:1A:12:34:56"))
        }
        #expect(error?.kind == .unreachable)
        #expect(error?.message.contains(url) == true)
        try await client.shutdown()
        withExtendedLifetime(closed) {}
    }

    @Test("pairing with a wrong token is .tokenRefused and the message does not leak it")
    func pairWrongToken() async throws {
        let backend = try TestBackend(.init(token: Harness.token, pairingCodes: ["ABC123"]))
        try await backend.start()
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: "not-the-token"))
        let error = await #expect(throws: BackendError.self) {
            _ = try await client.pair(code: "ABC123", device: PairingDevice(address: "A0:9E:1A:12:34:56"))
        }
        #expect(error?.kind == .tokenRefused)
        #expect(error?.message.contains("not-the-token") == false)
        try await client.shutdown()
        await backend.stop()
    }

    @Test("an empty metrics post checks reachability and the token (blegate doctor)")
    func emptyMetricsPost() async throws {
        try await withBackend { _, client in
            let result = try await client.postMetrics(gatewayID: "gym-north-1", records: [])
            #expect(result == MetricsResult(inserted: 0, duplicates: 0, rejected: [], status: 200))
        }
    }

    @Test("a URL that is not http(s) is refused with the key and an example")
    func badURL() {
        let error = #expect(throws: BackendError.self) {
            _ = try BackendClient(baseURL: "backend.example", token: TokenStore(token: nil))
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.message.contains("backend.url") == true)
        #expect(error?.message.contains("Example") == true)
    }
}
