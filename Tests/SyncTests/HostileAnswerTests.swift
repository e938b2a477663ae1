// SPDX-License-Identifier: MIT
import Outbox
import Sync
import Testing
import WearMetrics

/// A backend's texts are outside input: what the gateway keeps of them (rejection reasons
/// in the cache and the journal, client ids in the registry) is printable, capped, and
/// never the token. Real HTTP on loopback (`MisbehavingBackend`).
@Suite("Hostile texts in the backend's answers", .timeLimit(.minutes(2)))
struct HostileAnswerTests {
    static let token = "t0ken-hostile-42"

    func with(_ answer: MisbehavingBackend.Answer, _ body: (BackendClient) async throws -> Void) async throws {
        try await MisbehavingBackend.with(answer, token: Self.token, timeout: .seconds(10)) { _, client in try await body(client) }
    }

    static func isPrintable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { s in
            s.value < 0x20 || (0x7F...0x9F).contains(s.value) || [0x200E, 0x200F].contains(s.value)
                || (0x202A...0x202E).contains(s.value) || (0x2066...0x2069).contains(s.value)
        }
    }

    static let record = OutboxRecord(id: "0190a4c2-0000-7000-8000-000000000001", clientID: nil, sequence: 1,
                                     record: WearMetrics(timestamp: UTCTimestamp(millisecondsSince1970: 1_735_689_600_000),
                                                         deviceID: "A0:9E:1A:12:34:56", source: "ble_hrm",
                                                         metrics: KeyValueList([("hr", 70)])))

    @Test("rejection reasons: escape sequences, C1 controls and overrides made printable, the length capped, the token redacted")
    func rejectionReasons() async throws {
        // JSON escapes: ESC ] 0 ; ... BEL, ESC [ 2 J, U+009B (CSI), U+202E, then 2,000 letters.
        let hostile = #"bad\u001b]0;owned\u0007\u001b[2Jrecord\u009b31m \u202Etxt.exe Bearer t0ken-hostile-42 "#
            + String(repeating: "x", count: 2000)
        let body = #"{"inserted":1,"duplicates":0,"rejected":[{"id":"0190a4c2-0000-7000-8000-000000000001","reason":""# + hostile + #""},"#
            + #"{"id":"other","reason":"plain reason"},{"id":"none"}]}"#
        try await with(.json(status: 200, body: body)) { client in
            let result = try await client.postMetrics(gatewayID: "gym-1", records: [Self.record])
            try #require(result.rejected.count == 3)
            let reason = result.rejected[0].reason
            #expect(Self.isPrintable(reason), "\(reason.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(reason.hasPrefix("bad\u{FFFD}]0;owned\u{FFFD}\u{FFFD}[2Jrecord\u{FFFD}31m \u{FFFD}txt.exe Bearer <token> "), "\(reason.prefix(80))")
            #expect(!reason.contains(Self.token))
            #expect(reason.count == 301 && reason.hasSuffix("x…"), "\(reason.count)")
            #expect(result.rejected[0].id == Self.record.id)
            #expect(result.rejected[1].reason == "plain reason", "a clean reason is kept as it came")
            #expect(result.rejected[2].reason == "rejected by the backend without a reason")
        }
    }

    @Test("a pairing answered with a client id that is not printable text is refused, not stored")
    func hostileClientID() async throws {
        try await with(.json(status: 200, body: #"{"client_id":"member\u001b[2J\u001b]0;x\u0007"}"#)) { client in
            let error = await #expect(throws: BackendError.self) {
                _ = try await client.pair(code: "ABC123", device: PairingDevice(address: "A0:9E:1A:12:34:56"))
            }
            #expect(error?.kind == .invalidResponse)
            #expect(error?.message.contains("not printable text") == true, "\(String(describing: error))")
            #expect(error.map { Self.isPrintable($0.message) } == true, "\(String(describing: error))")
        }
        try await with(.json(status: 200, body: #"{"client_id":"Zoë-7f3a"}"#)) { client in
            let id = try await client.pair(code: "ABC123", device: PairingDevice(address: "A0:9E:1A:12:34:56"))
            #expect(id == "Zoë-7f3a", "letters beyond ASCII are printable")
        }
    }
}
