// SPDX-License-Identifier: MIT
import BlegateServer
import BlegateTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// A database out of reach is explained with what to check, not with the library's words.
@Suite("blegate-server database errors")
struct DatabaseErrorTests {
    static var quiet: Logger {
        var l = Logger(label: "db-error-test")
        l.logLevel = .critical
        return l
    }

    static func probeMessage(_ url: DatabaseURL) async -> String? {
        do {
            try await url.probe(logger: quiet)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("nothing listening on the port: connection refused, is PostgreSQL running?")
    func refused() async throws {
        let url = try DatabaseURL("postgres://blegate@127.0.0.1:1/blegate?sslmode=disable")
        let message = try #require(await Self.probeMessage(url))
        #expect(message == "cannot connect to \(url): connection refused at 127.0.0.1:1 — is PostgreSQL running? (`systemctl status postgresql`, `pg_lsclusters`)",
                "\(message)")
    }

    @Test("no socket in the directory: no PostgreSQL socket there")
    func noSocket() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-nosocket-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = try DatabaseURL("postgres://blegate@/blegate?host=\(dir)")
        let message = try #require(await Self.probeMessage(url))
        #expect(message.hasSuffix("no PostgreSQL socket at \(dir) (port 5432) — is PostgreSQL running, on that port? (`systemctl status postgresql`, `pg_lsclusters`)"),
                "\(message)")
    }

    @Test("an unknown role and an unknown database name the command that makes them")
    func unknownRoleAndDatabase() async throws {
        var url = try await PostgresFixture.cluster.admin()
        url.user = "no_such_role"
        let role = try #require(await Self.probeMessage(url))
        #expect(role.contains("role \"no_such_role\" does not exist — create the role (`createuser no_such_role` as postgres)"), "\(role)")
        url = try await PostgresFixture.cluster.admin()
        url.database = "no_such_db"
        let database = try #require(await Self.probeMessage(url))
        #expect(database.contains("database \"no_such_db\" does not exist — create it (`createdb -O \(url.user) no_such_db` as postgres)"),
                "\(database)")
    }

    @Test("a server that asks for a password the URL lacks: add one or allow peer/trust in pg_hba.conf")
    func passwordRequired() throws {
        // The fixture's cluster trusts every local connection, so the error PostgresNIO gives
        // for a password request without a password is judged here as the probe maps it.
        let url = try DatabaseURL("postgres://blegate@db.gym.example/blegate")
        let text = url.explanation(code: .authMechanismRequiresPassword, sqlState: nil, reason: "authMechanismRequiresPassword")
        #expect(text == "the server asks for a password but the database URL has none: add one (postgres://blegate:PASSWORD@host/blegate) "
                + "or allow peer or trust authentication for blegate in pg_hba.conf")
        let refused = url.explanation(code: .server, sqlState: "28P01", reason: "password authentication failed for user \"blegate\"")
        #expect(refused.hasPrefix("password authentication failed for user \"blegate\" — check the password in the database URL"))
    }

    @Test("the CLI says the same: `gateway list` against a closed port")
    func cli() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let run = await shell("'\(ServerProcess.binary)' gateway list --database-url 'postgres://blegate@127.0.0.1:1/blegate?sslmode=disable' 2>&1")
        #expect(run.status != 0 && run.out.contains("connection refused at 127.0.0.1:1 — is PostgreSQL running?"), "\(run.out)")
    }
}
