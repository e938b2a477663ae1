// SPDX-License-Identifier: MIT
import BlegateServer
import NIOSSL
import Testing

/// `--database-url` in both spellings, and the mistakes it names.
@Suite("blegate-server database URL")
struct DatabaseURLTests {
    @Test("TCP with user, password and port; a unix socket directory; percent-encoded passwords")
    func parses() throws {
        let tcp = try DatabaseURL("postgres://blegate:s%40cret@db.gym.example:6543/blegate")
        #expect(tcp.user == "blegate" && tcp.password == "s@cret" && tcp.host == "db.gym.example" && tcp.port == 6543)
        #expect(tcp.database == "blegate" && tcp.socketDirectory == nil)
        #expect(tcp.description == "postgres://blegate@db.gym.example:6543/blegate")   // no password in logs

        let socket = try DatabaseURL("postgresql://blegate-server@/blegate?host=/run/postgresql")
        #expect(socket.socketDirectory == "/run/postgresql" && socket.port == 5432 && socket.password == nil)
        #expect(socket.clientConfiguration.unixSocketPath == "/run/postgresql/.s.PGSQL.5432")

        let defaults = try DatabaseURL("postgres://localhost/x")
        #expect(defaults.user == "postgres" && defaults.host == "localhost" && defaults.port == 5432)
    }

    @Test("sslmode: libpq's default prefer; disable, require, verify-ca and verify-full map to PostgresNIO's TLS; sslrootcert; none on a socket")
    func sslModes() throws {
        let plain = try DatabaseURL("postgres://a@db/x")
        #expect(plain.sslMode == .prefer && plain.sslRootCert == nil)
        #expect(plain.tls?.required == false && plain.tls?.configuration.certificateVerification == CertificateVerification.none)

        let cases: [(String, DatabaseURL.SSLMode, required: Bool?, CertificateVerification?)] = [
            ("disable", .disable, nil, nil),
            ("prefer", .prefer, false, CertificateVerification.none),
            ("require", .require, true, CertificateVerification.none),
            ("verify-ca", .verifyCA, true, .noHostnameVerification),
            ("verify-full", .verifyFull, true, .fullVerification),
        ]
        for (text, mode, required, verification) in cases {
            let url = try DatabaseURL("postgres://a:pw@db.gym.example:5433/x?sslmode=\(text)")
            #expect(url.sslMode == mode, "\(text)")
            #expect(url.tls?.required == required && url.tls?.configuration.certificateVerification == verification, "\(text)")
            #expect(try DatabaseURL(url.description) == { var u = url; u.password = nil; return u }(), "\(text): \(url.description)")
        }
        #expect(try DatabaseURL("postgres://a@db/x?sslmode=verify-full").description == "postgres://a@db:5432/x?sslmode=verify-full")

        // A CA file: trusted instead of the system's; require then checks the chain, as libpq does.
        let pinned = try DatabaseURL("postgres://a@db/x?sslmode=require&sslrootcert=%2Fetc%2Fblegate%2Fdb-ca.pem")
        #expect(pinned.sslRootCert == "/etc/blegate/db-ca.pem")
        #expect(pinned.tls?.configuration.trustRoots == .file("/etc/blegate/db-ca.pem"))
        #expect(pinned.tls?.configuration.certificateVerification == .noHostnameVerification)
        #expect(try DatabaseURL(pinned.description) == pinned)

        // A unix socket carries no TLS, whatever sslmode says (libpq ignores it there too).
        #expect(try DatabaseURL("postgres://a@/x?host=/run/postgresql&sslmode=verify-full").tls == nil)
    }

    @Test("a wrong scheme, no database, a bad port or an unknown sslmode is refused with the reason")
    func refuses() {
        for (text, reason) in [("mysql://a@b/c", "must start with postgres://"), ("postgres://a@b", "names no database"),
                               ("postgres://a@b:99999/c", "bad port"),
                               ("postgres://a@b/c?sslmode=allow", "sslmode must be one of disable, prefer, require, verify-ca, verify-full, got allow")] {
            #expect {
                try DatabaseURL(text)
            } throws: { error in
                String(describing: error).contains(reason)
            }
        }
    }
}
