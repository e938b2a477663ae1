// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import PostgresNIO
import Testing

/// One room's gateway for the end-to-end tests: a `blegate run` with its own state
/// directory, status socket and token, sending to a blegate-server, and the commands a
/// member of staff would run against it.
struct GatewayRoom {
    let id: String
    let dir: String
    var config: String { dir + "/blegate.toml" }
    var blegate: String { "'\(BlegateBinary.path)'" }

    /// Pairs each strap to its member in its room as staff do: a pairing code made in the
    /// server's database, then `blegate pair` on that room's gateway.
    static func pair(_ pairings: [(room: GatewayRoom, strap: String, member: String)], database: DatabaseURL) async throws {
        let codes = try await PostgresFixture.withClient(database) { c in
            let store = ServerStore(client: c, logger: .init(label: "pairing"))
            var codes: [String] = []
            for p in pairings { codes.append(try await store.createPairingCode(clientID: p.member, validSeconds: 3600).code) }
            return codes
        }
        for (p, code) in zip(pairings, codes) {
            let paired = await p.room.cli("pair --device \(p.strap) --code \(code)")
            #expect(paired.status == 0, "\(p.room.id) \(p.strap): \(paired.out)")
        }
    }

    /// `extra` is appended to the configuration (say a `[workouts]` table); `metrics` is
    /// `[metrics] listen` (off unless given).
    init(id: String, backend: String, token: String, metrics: String = "", extra: String = "") throws {
        self.id = id
        var template = Array("/tmp/blegate-server-e2e.XXXXXX".utf8CString)
        guard let d = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw TestSupportError("mkdtemp failed")
        }
        dir = d
        try (token + "\n").write(toFile: d + "/token", atomically: true, encoding: .utf8)
        chmod(d + "/token", 0o600)
        try """
            [gateway]
            id = "\(id)"
            state_directory = "\(d)"
            [status]
            socket = "\(d)/status.sock"
            [backend]
            url = "\(backend)"
            token_file = "\(d)/token"
            interval = "500ms"
            [metrics]
            listen = "\(metrics)"
            [display]
            listen = ""
            \(extra)
            """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    func run(bus: String) async throws -> BackgroundProcess {
        try await BackgroundProcess.start("\(blegate) run --config '\(config)' --bus '\(bus)'")
    }

    /// `blegate <arguments> --config <this room's>`.
    func cli(_ arguments: String) async -> (out: String, status: Int32) {
        await shell("\(blegate) \(arguments) --config '\(config)' 2>&1")
    }

    /// `blegate status --json`, parsed.
    func status() async -> ContractValue? {
        let (out, code) = await shell("\(blegate) status --json --config '\(config)'")
        guard code == 0 else { return nil }
        return try? ContractValue.parse(out)
    }

    /// (pending, delivered) from `blegate status --json`.
    /// Pending counts records not yet at the server, committed or still buffered in memory
    /// (the cache commits once a second).
    func outbox() async -> (pending: Int, delivered: Int)? {
        guard let o = await status()?["outbox"] else { return nil }
        let buffered = o["buffered"]?.number.map { Int($0) } ?? 0
        return ((o["pending"]?.number.map { Int($0) } ?? -1) + buffered, o["delivered"]?.number.map { Int($0) } ?? -1)
    }

    /// Workouts still waiting in the cache for the server.
    func pendingWorkouts() async -> Int? {
        await status()?["outbox"]?["pending_workouts"]?.number.map { Int($0) }
    }

    /// Every record in the gateway's cache: id, device, second.
    func cached() async throws -> [(id: String, device: String, source: String, second: String, state: String)] {
        let (out, code) = await shell("\(blegate) cache export --since all --config '\(config)'")
        guard code == 0 else { throw TestSupportError("cache export: \(out)") }
        return out.split(separator: "\n").compactMap { line in
            guard let j = try? ContractValue.parse(String(line)), let id = j["id"]?.string, let d = j["device_id"]?.string,
                  let s = j["source"]?.string, let t = j["timestamp"]?.string,
                  let state = j["state"]?.string else { return nil }
            return (id.lowercased(), d, s, String(t.prefix(19)), state)
        }
    }

    /// Every workout in the gateway's cache, as it was sent, with its `delivery`.
    func workouts() async throws -> [ContractValue] {
        let (out, code) = await shell("\(blegate) workouts --json --config '\(config)'")
        guard code == 0 else { throw TestSupportError("workouts: \(out)") }
        return try out.split(separator: "\n").map { try ContractValue.parse(String($0)) }
    }
}

/// The `blegate-server` executable beside `blegate`, run as a process.
enum ServerProcess {
    static var binary: String {
        URL(fileURLWithPath: BlegateBinary.path).deletingLastPathComponent().appendingPathComponent("blegate-server").path
    }

    /// Starts it on `port` (0: a free one) and returns it with the port it bound.
    /// `metrics`: `--metrics-listen` (off unless given, so tests never share its port).
    static func start(_ database: DatabaseURL, port: Int, metrics: String = "") async throws -> (BackgroundProcess, Int) {
        let p = try await BackgroundProcess.start(
            "'\(binary)' serve --listen 127.0.0.1:\(port) --metrics-listen '\(metrics)' --database-url '\(database)'")
        for _ in 0..<600 {
            let text = p.stdout + p.stderr
            if let range = text.range(of: "blegate-server listening on 127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let bound = Int(digits) { return (p, bound) }
            }
            if await p.wait(timeout: 0.1) != nil { break }
        }
        throw TestSupportError("blegate-server did not start: \(p.stdout) \(p.stderr)")
    }

    /// A database with the schema and one gateway token per id, in order.
    static func prepare(_ database: DatabaseURL, gateways: [String]) async throws -> [String] {
        try await PostgresFixture.withClient(database) { c in
            let store = ServerStore(client: c, logger: .init(label: "e2e"))
            _ = try await store.migrate()
            var tokens: [String] = []
            for g in gateways { tokens.append(try await store.addGateway(g)) }
            return tokens
        }
    }

    /// How many records the server stored from `gateway`.
    static func records(_ database: DatabaseURL, gateway: String) async throws -> Int {
        try await PostgresFixture.withClient(database) { c in
            var n = 0
            for try await v in try await c.query("SELECT count(*)::int8 FROM records WHERE gateway_id = \(gateway)").decode(Int.self) { n = v }
            return n
        }
    }
}
