// SPDX-License-Identifier: MIT
import BlegateServer
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

    @Test("a wrong scheme, no database or a bad port is refused with the reason")
    func refuses() {
        for (text, reason) in [("mysql://a@b/c", "must start with postgres://"), ("postgres://a@b", "names no database"),
                               ("postgres://a@b:99999/c", "bad port")] {
            #expect {
                try DatabaseURL(text)
            } throws: { error in
                String(describing: error).contains(reason)
            }
        }
    }
}
