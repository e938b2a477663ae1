// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// The `blegate-server` admin subcommands run as processes against a database a server is
/// serving: each one's effect is seen in what the server answers.
@Suite("blegate-server admin commands as processes")
struct AdminCommandTests {
    @Test("migrate, gateway add/list/revoke, pairing create --expires, staff add/revoke: tokens that work until revoked, a code that pairs once")
    func commands() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        /// stdout alone, or stdout and stderr together (`merged`), and the exit status.
        func run(_ arguments: String, merged: Bool = false) async -> (out: String, status: Int32) {
            await shell("'\(ServerProcess.binary)' \(arguments) --database-url '\(database)'" + (merged ? " 2>&1" : " 2>/dev/null"))
        }
        func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }
        func isToken(_ s: String) -> Bool { s.hasPrefix("bgt_") && s.count == 68 && s.dropFirst(4).allSatisfy { "0123456789abcdef".contains($0) } }

        // migrate: every step once, and again changes nothing. The database URL from the environment works too.
        let migrated = await shell("BLEGATE_DATABASE_URL='\(database)' '\(ServerProcess.binary)' migrate 2>&1")
        #expect(migrated.status == 0 && migrated.out.contains("schema is up to date"), "\(migrated.out)")
        #expect(await run("migrate").status == 0)
        let steps = try await PostgresFixture.withClient(database) { c in
            var versions: [Int] = []
            for try await v in try await c.query("SELECT version FROM schema_migrations ORDER BY version").decode(Int.self) { versions.append(v) }
            return versions
        }
        #expect(steps == [1, 2, 3])

        // A database out of reach is named with the server's reason at once, not after the pool's retries.
        var missing = database
        missing.database = "no_such_db"
        let unreachable = await shell("'\(ServerProcess.binary)' gateway list --database-url '\(missing)' 2>&1")
        #expect(unreachable.status != 0 && unreachable.out.contains("cannot connect to \(missing): database \"no_such_db\" does not exist"),
                "\(unreachable.out)")

        let added = await run("gateway add room-1")
        let token = added.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(added.status == 0 && isToken(token), "\(added.out)")
        let again = await run("gateway add room-1", merged: true)
        #expect(again.status != 0 && again.out.contains("already exists with a live token"), "\(again.out)")

        var logger = Logger(label: "admin-test")
        logger.logLevel = .error
        let server = BlegateServer(.init(host: "127.0.0.1", port: 0, database: database), logger: logger)
        let port = try await server.start()
        defer { Task { await server.stop() } }
        let base = "http://127.0.0.1:\(port)"
        func post(_ path: String, _ body: String, _ token: String) async throws -> ServerHarness.Answer {
            try await ServerHarness.send(to: base + path, body, token: token, outboxDepth: 7, version: "9.9.9")
        }
        func get(_ path: String, _ token: String) async throws -> Int {
            let answer = try await ServerHarness.send(to: base + path, "", token: token, method: .GET, gzip: false)
            return answer.status
        }

        // The token `gateway add` printed sends as room-1; `gateway list` shows the contact.
        let sent = try await post("/api/v1/metrics", Make.metrics(gateway: "room-1", [Make.record(time: "2026-11-25T10:00:00.000Z")]), token)
        #expect(sent.status == 200 && sent.json?["inserted"]?.intValue == 1, "\(sent.body)")
        let listed = await run("gateway list")
        #expect(listed.status == 0)
        let row = lines(listed.out).first { $0.hasPrefix("room-1\t") }?.split(separator: "\t").map(String.init) ?? []
        #expect(row.count == 6 && row[1] == "live" && row[2].hasSuffix("Z") && row[3] == "7" && row[4] == "9.9.9" && row[5] == "1",
                "\(listed.out)")

        // A staff token reads until it is revoked.
        let staff = await run("staff add reception")
        let staffToken = staff.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(staff.status == 0 && isToken(staffToken), "\(staff.out)")
        #expect(try await get("/api/v1/gateways", staffToken) == 200)
        let staffRevoked = await run("staff revoke reception")
        #expect(staffRevoked.status == 0 && staffRevoked.out.contains("revoked reception"))
        #expect(try await get("/api/v1/gateways", staffToken) == 401)
        #expect(await run("staff revoke nobody").status != 0)

        // A code pairs once, for the member it was made for, and expires when `--expires` says.
        let made = await run("pairing create --client-id m-7 --expires 90s")
        let code = made.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(made.status == 0 && code.count == 6, "\(made.out)")
        let validFor = try await PostgresFixture.withClient(database) { c in
            var seconds = 0.0
            for try await s in try await c.query("SELECT extract(epoch FROM expires_at - created_at)::float8 FROM pairing_codes WHERE code = \(code)")
                .decode(Double.self) { seconds = s }
            return seconds
        }
        #expect(abs(validFor - 90) < 5, "expires 90 s after it was made: \(validFor)")
        let pairBody = "{\"code\":\"\(code)\",\"device\":{\"address\":\"A0:9E:1A:00:00:07\"}}"
        let paired = try await post("/api/v1/pair", pairBody, token)
        #expect(paired.status == 200 && paired.json?["client_id"]?.string == "m-7", "\(paired.body)")
        #expect(try await post("/api/v1/pair", pairBody, token).status == 409)
        for bad in ["0s", "5x", "h"] {
            let refused = await run("pairing create --client-id m-8 --expires \(bad)", merged: true)
            #expect(refused.status != 0 && refused.out.contains("--expires"), "\(bad): \(refused.out)")
        }

        // Revoked: 403 from then on, listed as revoked; a new `gateway add` issues a working token.
        let revoked = await run("gateway revoke room-1")
        #expect(revoked.status == 0 && revoked.out.contains("revoked room-1"))
        #expect(try await post("/api/v1/metrics", Make.metrics(gateway: "room-1", []), token).status == 403)
        #expect(lines(await run("gateway list").out).contains { $0.hasPrefix("room-1\trevoked\t") })
        #expect(await run("gateway revoke room-9").status != 0)
        let renewed = await run("gateway add room-1").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(isToken(renewed) && renewed != token)
        #expect(try await post("/api/v1/metrics", Make.metrics(gateway: "room-1", []), renewed).status == 200)
        #expect(try await post("/api/v1/metrics", Make.metrics(gateway: "room-1", []), token).status == 401)
    }
}
