// SPDX-License-Identifier: MIT
import BackendContract
import AsyncHTTPClient
import BlegateServer
import BlegateTestSupport
import Foundation
import NIOCore
import PostgresNIO
import Testing

/// The database goes away under a running blegate-server and a `blegate run` sending to it:
/// the server answers 503 with `Retry-After`, the gateway keeps its records and sends them
/// again, and once the database is back every record arrives once.
@Suite("blegate-server when its database goes away", .serialized)
struct DatabaseOutageTests {
    @Test("the database refuses connections for a while: 503 meanwhile, the gateway's records wait and arrive once it is back",
          .timeLimit(.minutes(6)))
    func outage() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        let admin = try await PostgresFixture.cluster.admin()
        let token = try await ServerProcess.prepare(database, gateways: ["room-o"])[0]
        let (server, port) = try await ServerProcess.start(database, port: 0)
        defer { server.signal(SIGKILL) }
        let room = try GatewayRoom(id: "room-o", backend: "http://127.0.0.1:\(port)", token: token)

        // The database goes away for this server alone: it refuses new connections and its
        // open ones are ended, as when PostgreSQL restarts or fails over (the other tests'
        // databases on the same cluster carry on).
        func connections(allowed: Bool) async throws {
            try await PostgresFixture.withClient(admin) { c in
                _ = try await c.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(database.database) ALLOW_CONNECTIONS \(allowed)"))
                if !allowed {
                    _ = try await c.query("""
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = \(database.database) AND pid <> pg_backend_pid()
                        """)
                }
            }
        }

        try await withSimulatorOnPrivateBus({ $0.straps = 2; $0.seed = 5 }) { bus, sim in
            let run = try await room.run(bus: bus.address)
            defer { run.signal(SIGKILL) }
            #expect(try await eventually(timeout: 90) { try await ServerProcess.records(database, gateway: "room-o") >= 10 },
                    "records reach the server: \(run.stderr.suffix(800))")

            try await connections(allowed: false)
            // A gateway's request and the health check answer 503 with Retry-After, not an error
            // that would make the gateway drop or quarantine its records.
            // Within a gateway's own deadline for an exchange (30 s), so it hears "retry later".
            let asked = ContinuousClock.now
            let answer = try await Self.post(port: port, token: token, records: [Self.record()])
            #expect(answer.status == 503 && answer.retryAfter == "5", "\(answer)")
            #expect(ContinuousClock.now - asked < .seconds(25), "answered after \(ContinuousClock.now - asked)")
            #expect(try await Self.get(port: port, path: "/healthz").status == 503)
            // The gateway hears the 503, keeps measuring and keeps its records.
            let heard503 = await eventually(timeout: 90) {
                guard let errors = await room.status()?["errors"]?.array else { return false }
                return errors.contains { $0["detail"]?.string == "HTTP 503" }
            }
            let errors = await room.status()?["errors"]?.text ?? "no status"
            #expect(heard503, "the gateway saw 503: \(errors)")
            let delivered = await room.outbox()?.delivered ?? -1
            #expect(await eventually(timeout: 60) { (await room.outbox()?.pending ?? 0) >= 20 }, "records wait in the gateway's outbox")
            let during = await room.outbox()
            #expect(during?.delivered == delivered, "nothing is delivered while the database is away: \(String(describing: during)) vs \(delivered)")

            try await connections(allowed: true)
            #expect(await eventually(timeout: 90) { (await room.outbox()?.delivered ?? 0) > (during?.delivered ?? 0) + 20 },
                    "the waiting records arrive once the database is back: \(run.stderr.suffix(800))")
            #expect(try await Self.get(port: port, path: "/healthz").status == 200)
            await sim.stop()
            #expect(await eventually(timeout: 90) { await room.outbox()?.pending == 0 }, "the outbox drains")
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 30) == 0)
        }

        // Every record the gateway measured is on the server, once.
        let cached = try await room.cached()
        let stored = try await PostgresFixture.withClient(database) { c in
            var ids: [String] = []
            for try await id in try await c.query("SELECT id::text FROM records WHERE gateway_id = 'room-o'").decode(String.self) { ids.append(id) }
            return ids
        }
        #expect(cached.count > 40)
        // Records made between the drained outbox and SIGTERM (a quiet strap's last HRV
        // report) wait in the cache for the next start: pending, never lost or refused.
        let delivered = cached.filter { $0.state == "delivered" }.map(\.id)
        #expect(cached.allSatisfy { $0.state == "delivered" || $0.state == "pending" })
        let missing = Set(delivered).subtracting(stored).count, unknown = Set(stored).subtracting(delivered).count
        #expect(Set(stored) == Set(delivered), "\(missing) missing, \(unknown) unknown (\(cached.count - delivered.count) pending)")
        // The probe record sent during the outage was answered 503, so it is not there either.
        #expect(stored.count == delivered.count)
    }

    struct Answer: CustomStringConvertible {
        var status: Int
        var retryAfter: String?
        var body: String
        var description: String { "\(status) Retry-After \(retryAfter ?? "-") \(body)" }
    }

    static func record() -> String {
        """
        {"id":"\(UUID().uuidString.lowercased())","client_id":null,"timestamp":"2026-11-25T10:00:00.000Z","device_id":"A0:9E:1A:00:00:99","source":"ble_hrm","metrics":{"hr":120},"meta":{}}
        """
    }

    /// A gateway's batch, as `blegate run` sends it (without gzip, which the server also takes).
    static func post(port: Int, token: String, records: [String]) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/metrics")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "{\"gateway_id\":\"room-o\",\"records\":[\(records.joined(separator: ","))]}"))
        return try await execute(request)
    }

    static func get(port: Int, path: String) async throws -> Answer {
        try await execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"))
    }

    private static func execute(_ request: HTTPClientRequest) async throws -> Answer {
        let answer = try await ServerHarness.fetch(request, limit: 1 << 20, timeout: 60)
        return Answer(status: answer.status, retryAfter: answer.headers.first(name: "Retry-After"), body: answer.body)
    }
}
