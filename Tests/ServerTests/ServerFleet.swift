// SPDX-License-Identifier: MIT
import BlegateServer
import BlegateTestSupport
import Foundation

/// Debian's PgBouncer in transaction mode on 127.0.0.1, in front of the test cluster's
/// unix socket: every database name maps to the same name there, trust authentication.
/// As root it runs as `postgres` (PgBouncer refuses root), exec'd by setpriv so the pid
/// is PgBouncer's own.
struct PgBouncerProcess {
    let process: BackgroundProcess
    let port: Int

    static func start(socketDirectory: String) async throws -> PgBouncerProcess {
        let binary = "/usr/sbin/pgbouncer"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw TestSupportError("no \(binary): install pgbouncer (scripts/setup.sh with BLEGATE_SETUP_TESTS=1)")
        }
        let dir = try scratchDirectory()
        chmod(dir, 0o755)   // PgBouncer runs as postgres
        let port = try freeLoopbackPort()
        try """
            [databases]
            * = host=\(socketDirectory) port=5432
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(dir)/users.txt
            pool_mode = transaction
            max_client_conn = 400
            default_pool_size = 20
            """.write(toFile: dir + "/pgbouncer.ini", atomically: true, encoding: .utf8)
        try "\"postgres\" \"\"\n".write(toFile: dir + "/users.txt", atomically: true, encoding: .utf8)
        let asPostgres = getuid() == 0 ? "setpriv --reuid=postgres --regid=postgres --init-groups " : ""
        if getuid() == 0 { _ = await shell("chown -R postgres: '\(dir)'") }
        let process = try await BackgroundProcess.start("exec \(asPostgres)\(binary) '\(dir)/pgbouncer.ini'")
        guard await process.waitForStderr("process up", timeout: 30) || process.stdout.contains("process up") else {
            throw TestSupportError("pgbouncer did not start: \(process.stdout) \(process.stderr)")
        }
        return PgBouncerProcess(process: process, port: port)
    }

    /// `database` reached through this PgBouncer instead of its socket.
    func url(for database: DatabaseURL) throws -> DatabaseURL {
        try DatabaseURL("postgres://\(database.user)@127.0.0.1:\(port)/\(database.database)?sslmode=disable")
    }
}

/// Debian's HAProxy on 127.0.0.1 balancing HTTP round-robin over blegate-server instances,
/// each checked with `GET /healthz` every 500 ms (down after 2 failures, up after 2
/// passes), and a statistics page (`/stats;csv`) the test reads instances' states from.
struct HAProxyProcess {
    let process: BackgroundProcess
    let port: Int
    let statsPort: Int

    static func start(backends: [Int]) async throws -> HAProxyProcess {
        let binary = "/usr/sbin/haproxy"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw TestSupportError("no \(binary): install haproxy (scripts/setup.sh with BLEGATE_SETUP_TESTS=1)")
        }
        let dir = try scratchDirectory()
        let port = try freeLoopbackPort(), statsPort = try freeLoopbackPort()
        let servers = backends.enumerated().map { "    server s\($0.offset + 1) 127.0.0.1:\($0.element) check" }
        try ([
            "global", "    maxconn 2000",
            "defaults", "    mode http", "    timeout connect 2s", "    timeout client 60s", "    timeout server 30s",
            "    retries 3", "    option redispatch", "    retry-on conn-failure empty-response",
            "frontend api", "    bind 127.0.0.1:\(port)", "    default_backend blegate_server",
            "backend blegate_server", "    balance roundrobin", "    option httpchk GET /healthz", "    http-check expect status 200",
            "    default-server inter 500ms fall 2 rise 2",
        ] + servers + [
            "listen stats", "    bind 127.0.0.1:\(statsPort)", "    stats enable", "    stats uri /stats",
        ]).joined(separator: "\n").appending("\n").write(toFile: dir + "/haproxy.cfg", atomically: true, encoding: .utf8)
        let process = try await BackgroundProcess.start("exec \(binary) -db -f '\(dir)/haproxy.cfg'")
        let h = HAProxyProcess(process: process, port: port, statsPort: statsPort)
        guard await eventually(timeout: 30, { (try? await h.servers())?.filter { $0.key != "BACKEND" }.count == backends.count }) else {
            throw TestSupportError("haproxy did not start: \(process.stdout) \(process.stderr)")
        }
        return h
    }

    /// Each instance's state (`UP`, `DOWN`, …), the requests it was sent, those it holds now
    /// and those HAProxy sent again after it failed them (retried or redispatched), by name
    /// (s1, s2, …; `BACKEND` for the whole pool, which alone counts some resends).
    func servers() async throws -> [String: (status: String, sessions: Int, current: Int, resent: Int)] {
        let (out, code) = await shell("curl -sf 'http://127.0.0.1:\(statsPort)/stats;csv'")
        guard code == 0 else { throw TestSupportError("haproxy stats: \(out)") }
        let lines = out.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first, let name = header.firstIndex(of: "svname"), let status = header.firstIndex(of: "status"),
              let total = header.firstIndex(of: "stot"), let current = header.firstIndex(of: "scur"),
              let retried = header.firstIndex(of: "wretr"), let redispatched = header.firstIndex(of: "wredis"),
              let proxy = header.firstIndex(of: "# pxname") else { return [:] }
        var found: [String: (String, Int, Int, Int)] = [:]
        for l in lines.dropFirst() where l.count > max(name, status, total, current, retried, redispatched)
            && l[proxy] == "blegate_server" && (l[name].hasPrefix("s") || l[name] == "BACKEND") {
            found[l[name]] = (l[status], Int(l[total]) ?? 0, Int(l[current]) ?? 0,
                              (Int(l[retried]) ?? 0) + (Int(l[redispatched]) ?? 0))
        }
        return found
    }
}
