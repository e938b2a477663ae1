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
        #expect(steps == [1, 2, 3, 4, 5, 6, 7])

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

    @Test("member add/list/set: a made-up or given id, an existing id refused by name, `none` clears, bad values name the option; gateway list says never seen")
    func memberCommands() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        func run(_ arguments: String) async -> (out: String, status: Int32) {
            await shell("'\(ServerProcess.binary)' \(arguments) --database-url '\(database)' 2>&1")
        }
        func lines(_ text: String) -> [[String]] { text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) } }

        let ana = await run("member add 'Ana López' --age 34 --max-hr 188 --sex female")
        let anaID = ana.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(ana.status == 0 && anaID.hasPrefix("m-") && anaID.count == 12, "\(ana.out)")
        let bo = await run("member add Bo --client-id c-5 --weight-kg 80.5")
        #expect(bo.status == 0 && bo.out.trimmingCharacters(in: .whitespacesAndNewlines) == "c-5", "\(bo.out)")
        let again = await run("member add Other --client-id c-5")
        #expect(again.status != 0 && again.out.contains("member c-5 already exists"), "\(again.out)")
        let badAge = await run("member set c-5 --age 400")
        #expect(badAge.status != 0 && badAge.out.contains("--age: must be a whole number from 5 to 120, got 400"), "\(badAge.out)")
        let badResting = await run("member set \(anaID) --resting-hr 200")
        #expect(badResting.status != 0 && badResting.out.contains("--resting-hr: must be a whole number from 25 to 120, got 200"), "\(badResting.out)")
        let above = await run("member set \(anaID) --resting-hr 100 --max-hr 100")
        #expect(above.status != 0 && above.out.contains("--resting-hr: must be below max_hr (100), got 100"), "\(above.out)")
        let noName = await run("member add ''")
        #expect(noName.status != 0 && noName.out.contains("name: must be 1 to 80 characters"), "\(noName.out)")
        #expect(await run("member set nobody --age 30").out.contains("no member nobody"))
        let set = await run("member set \(anaID) --age none --resting-hr 50 --name 'Ana L.'")
        #expect(set.status == 0, "\(set.out)")

        let listed = await run("member list")
        #expect(listed.status == 0)
        #expect(lines(listed.out) == [
            ["client_id", "name", "age", "max_hr", "resting_hr", "weight_kg", "sex", "straps"],
            [anaID, "Ana L.", "-", "188", "50", "-", "female", "-"],
            ["c-5", "Bo", "-", "-", "-", "80.5", "-", "-"],
        ], "\(listed.out)")

        #expect(await run("gateway add room-9").status == 0)
        let gateways = lines(await run("gateway list").out)
        #expect(gateways.contains(["room-9", "live", "never seen", "-", "-", "0"]), "\(gateways)")
    }
}
