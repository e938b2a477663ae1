// SPDX-License-Identifier: MIT
import BlegateServer
import BlegateTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// `sslmode` against a real PostgreSQL with `ssl = on` (scripts/test-postgres.sh with
/// BLEGATE_PG_TLS=1: its certificate for localhost and 127.0.0.1, from a throw-away
/// authority): which modes connect, whether the connection is encrypted, and which refuse.
@Suite("blegate-server's database connection over TLS")
struct DatabaseTLSTests {
    @Test("no sslmode, require, verify-ca and verify-full with the authority connect with TLS, disable without; verify-full with another authority is refused with the reason")
    func sslModes() async throws {
        let cluster = try await BackgroundProcess.start("BLEGATE_PG_TLS=1 '\(PostgresFixture.repository)/scripts/test-postgres.sh' \(getpid())")
        defer { cluster.signal(SIGTERM) }
        #expect(await cluster.waitForStdout("READY ", timeout: 120), "\(cluster.stderr)")
        let tls = try #require(cluster.stdout.split(separator: "\n").first { $0.hasPrefix("TLS ") }?.split(separator: " ").map(String.init))
        try #require(tls.count == 4, "\(cluster.stdout)")
        let (port, authority, other) = (tls[1], tls[2], tls[3])

        /// Whether the server sees this client's connection encrypted (`pg_stat_ssl`).
        func encrypted(_ query: String, host: String = "127.0.0.1") async throws -> Bool {
            let url = try DatabaseURL("postgres://postgres@\(host):\(port)/postgres\(query)")
            return try await PostgresFixture.withClient(url) { c in
                var ssl = false
                for try await s in try await c.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").decode(Bool.self) { ssl = s }
                return ssl
            }
        }
        #expect(try await encrypted("") == true, "prefer, the default, takes the TLS the server offers")
        #expect(try await encrypted("?sslmode=disable") == false)
        #expect(try await encrypted("?sslmode=require") == true)
        #expect(try await encrypted("?sslmode=verify-ca&sslrootcert=\(authority)") == true)
        #expect(try await encrypted("?sslmode=verify-full&sslrootcert=\(authority)") == true)
        #expect(try await encrypted("?sslmode=verify-full&sslrootcert=\(authority)", host: "localhost") == true)

        // A certificate from an authority not trusted: refused, with the reason.
        var quiet = Logger(label: "tls-test")
        quiet.logLevel = .error
        for query in ["?sslmode=verify-full&sslrootcert=\(other)", "?sslmode=verify-ca", "?sslmode=require&sslrootcert=\(other)"] {
            let url = try DatabaseURL("postgres://postgres@127.0.0.1:\(port)/postgres\(query)")
            let error = await #expect(throws: DatabaseURL.Unreachable.self) { try await url.probe(logger: quiet) }
            #expect(error?.description.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(query): \(String(describing: error))")
        }
        try await DatabaseURL("postgres://postgres@127.0.0.1:\(port)/postgres?sslmode=verify-full&sslrootcert=\(authority)").probe(logger: quiet)
    }
}
