// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import Foundation
import PostgresNIO
import Testing

/// Tokens and pairing codes: who may send, and what a code can be exchanged for.
@Suite("blegate-server tokens and pairing")
struct AccessTests {
    @Test("no token and an unknown one are 401, a revoked one 403, another gateway's id 403; a renewed token works; only hashes are stored")
    func tokens() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        let body = Make.metrics(gateway: "gw-a", [])
        #expect(try await h.send("/api/v1/metrics", body, token: nil).status == 401)
        #expect(try await h.send("/api/v1/metrics", body, token: "bgt_wrong").status == 401)
        #expect(try await h.send("/api/v1/metrics", body, token: token).status == 200)
        let other = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", []), token: token)
        #expect(other.status == 403 && other.json?["error"]?.string?.contains("does not match") == true)
        await #expect(throws: ServerStore.AdminError.self) { try await h.store.addGateway("gw-a") }

        #expect(try await h.store.revokeGateway("gw-a"))
        let revoked = try await h.send("/api/v1/metrics", body, token: token)
        #expect(revoked.status == 403 && revoked.json?["error"]?.string == "the token of gateway gw-a was revoked")
        #expect(try await h.send("/api/v1/pair", #"{"code":"X","device":{"address":"a"}}"#, token: token).status == 403)
        #expect(try await h.store.revokeGateway("gw-nope") == false)

        let renewed = try await h.store.addGateway("gw-a")
        #expect(renewed != token)
        #expect(try await h.send("/api/v1/metrics", body, token: renewed).status == 200)
        #expect(try await h.send("/api/v1/metrics", body, token: token).status == 401)

        let stored = try await PostgresFixture.withClient(h.database) { c in
            var all: [String] = []
            for try await s in try await c.query("SELECT token_sha256 FROM gateways").decode(String.self) { all.append(s) }
            return all
        }
        #expect(stored.count == 1 && stored[0].count == 64 && stored[0] != renewed)

        // Staff reads need a staff token; a gateway's token is not one.
        #expect(try await h.get("/api/v1/gateways", token: renewed).status == 401)
        #expect(try await h.get("/api/v1/members/c-1/workouts", token: "nope").status == 401)
    }

    @Test("a code pairs once (404 unknown, 409 reused, 410 expired), lower case accepted, the strap and gateway recorded")
    func pairing() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        let code = try await h.store.createPairingCode(clientID: "member-7", validSeconds: 3600).code
        let device = #""device":{"address":"A0:9E:1A:12:34:56","name":"Polar H10 1","model":"H10"}"#

        let unknown = try await h.send("/api/v1/pair", "{\"code\":\"ZZZZZZ\",\(device)}", token: token)
        #expect(unknown.status == 404 && unknown.body == #"{"error":"unknown pairing code"}"#)
        let paired = try await h.send("/api/v1/pair", "{\"code\":\"\(code.lowercased())\",\(device)}", token: token)
        #expect(paired.status == 200 && paired.body == #"{"client_id":"member-7"}"#)
        let reused = try await h.send("/api/v1/pair", "{\"code\":\"\(code)\",\(device)}", token: token)
        #expect(reused.status == 409 && reused.body == #"{"error":"pairing code already used"}"#)

        let late = try await h.store.createPairingCode(clientID: "member-8", validSeconds: 3600).code
        try await PostgresFixture.withClient(h.database) { c in
            _ = try await c.query("UPDATE pairing_codes SET expires_at = now() - interval '1 second' WHERE code = \(late)")
        }
        let expired = try await h.send("/api/v1/pair", "{\"code\":\"\(late)\",\(device)}", token: token)
        #expect(expired.status == 410 && expired.body == #"{"error":"pairing code expired"}"#)
        let noAddress = try await h.send("/api/v1/pair", "{\"code\":\"\(late)\",\"device\":{}}", token: token)
        #expect(noAddress.status == 400)

        let codes = try await h.store.pairingCodes()
        let used = codes.first { $0.code == code }
        #expect(used?.state == "used" && used?.device == "A0:9E:1A:12:34:56")
        #expect(codes.first { $0.code == late }?.state == "expired")
    }

    @Test("two gateways racing with one code: one pairs, the other is told it was used")
    func pairingRace() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let tokens = [try await h.store.addGateway("gw-a"), try await h.store.addGateway("gw-b")]
        let code = try await h.store.createPairingCode(clientID: "member-9", validSeconds: 60).code
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for t in tokens {
                group.addTask { try await h.send("/api/v1/pair", "{\"code\":\"\(code)\",\"device\":{\"address\":\"x\"}}", token: t).status }
            }
            var all: [Int] = []
            for try await s in group { all.append(s) }
            return all
        }
        #expect(statuses.sorted() == [200, 409])
    }
}
