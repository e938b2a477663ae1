// SPDX-License-Identifier: MIT
import BlegateServer
import BlegateTestSupport
import DBus
import Foundation
import JSON
import PostgresNIO
import Simulator
import Testing

/// Two rooms, each a `blegate run` with its own simulated BlueZ, three straps heard by both,
/// sending to one blegate-server process that is SIGKILLed mid-run and restarted. Ground
/// truth is each gateway's own cache: every record it measured is on the server once, or
/// answered as the other gateway's second; nothing is lost and nothing stored twice.
@Suite("blegate-server with two blegate run gateways", .serialized)
struct TwoGatewaysEndToEndTests {
    static let seed: UInt64 = 11

    struct Room {
        let id: String
        let dir: String
        var config: String { dir + "/blegate.toml" }
        var blegate: String { "'\(BlegateBinary.path)'" }

        init(id: String, backend: String, token: String) throws {
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
                [display]
                listen = ""
                """.write(toFile: config, atomically: true, encoding: .utf8)
        }

        func run(bus: String) async throws -> BackgroundProcess {
            try await BackgroundProcess.start("\(blegate) run --config '\(config)' --bus '\(bus)'")
        }

        /// (pending, delivered) from `blegate status --json`.
        /// Pending counts records not yet at the server, committed or still buffered in memory
        /// (the cache commits once a second).
        func outbox() async -> (pending: Int, delivered: Int)? {
            let (out, code) = await shell("\(blegate) status --json --config '\(config)'")
            guard code == 0, let j = try? JSONValue.parse(out), let o = j["outbox"] else { return nil }
            let buffered = o["buffered"]?.doubleValue.map { Int($0) } ?? 0
            return ((o["pending"]?.doubleValue.map { Int($0) } ?? -1) + buffered, o["delivered"]?.doubleValue.map { Int($0) } ?? -1)
        }

        /// Every record in the gateway's cache: id, device, second.
        func cached() async throws -> [(id: String, device: String, source: String, second: String)] {
            let (out, code) = await shell("\(blegate) cache export --since all --config '\(config)'")
            guard code == 0 else { throw TestSupportError("cache export: \(out)") }
            return out.split(separator: "\n").compactMap { line in
                guard let j = try? JSONValue.parse(String(line)), let id = j["id"]?.stringValue, let d = j["device_id"]?.stringValue,
                      let s = j["source"]?.stringValue, let t = j["timestamp"]?.stringValue else { return nil }
                return (id.lowercased(), d, s, String(t.prefix(19)))
            }
        }
    }

    static var serverBinary: String {
        URL(fileURLWithPath: BlegateBinary.path).deletingLastPathComponent().appendingPathComponent("blegate-server").path
    }

    static func startServer(_ database: DatabaseURL, port: Int) async throws -> (BackgroundProcess, Int) {
        let url = database.description
        let p = try await BackgroundProcess.start("'\(serverBinary)' serve --listen 127.0.0.1:\(port) --database-url '\(url)'")
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

    @Test("3 straps heard by both rooms: every record once, the server SIGKILLed and restarted mid-run: nothing lost, nothing twice",
          .timeLimit(.minutes(6)))
    func twoRooms() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.serverBinary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        let tokens = try await PostgresFixture.withClient(database) { c in
            let store = ServerStore(client: c, logger: .init(label: "e2e"))
            _ = try await store.migrate()
            return [try await store.addGateway("room-a"), try await store.addGateway("room-b")]
        }
        var (server, port) = try await Self.startServer(database, port: 0)
        defer { server.signal(SIGKILL) }
        let backend = "http://127.0.0.1:\(port)"
        let a = try Room(id: "room-a", backend: backend, token: tokens[0])
        let b = try Room(id: "room-b", backend: backend, token: tokens[1])

        func serverCount(_ gateway: String) async throws -> Int {
            try await PostgresFixture.withClient(database) { c in
                var n = 0
                for try await v in try await c.query("SELECT count(*)::int8 FROM records WHERE gateway_id = \(gateway)").decode(Int.self) { n = v }
                return n
            }
        }

        // Room A's simulator has 5 straps, room B's the first 3 of the same seed: the same
        // addresses, so 3 straps are heard by both rooms and 2 by room A only.
        try await withSimulatorOnPrivateBus({ $0.straps = 5; $0.seed = Self.seed }) { busA, simA in
            try await withSimulatorOnPrivateBus({ $0.straps = 3; $0.seed = Self.seed }) { busB, simB in
                let runA = try await a.run(bus: busA.address)
                let runB = try await b.run(bus: busB.address)
                defer { runA.signal(SIGKILL); runB.signal(SIGKILL) }

                #expect(try await eventually(timeout: 90) {
                    let na = try await serverCount("room-a")
                    let nb = try await serverCount("room-b")
                    return na >= 20 && nb >= 1
                },
                        "records from both rooms reach the server: \(runA.stderr.suffix(800)) \(runB.stderr.suffix(800))")

                server.signal(SIGKILL)
                _ = await server.wait(timeout: 10)
                // While it is down, both rooms keep measuring into their outboxes.
                #expect(await eventually(timeout: 60) {
                    let pa = await a.outbox()?.pending ?? 0
                    let pb = await b.outbox()?.pending ?? 0
                    return pa >= 10 && pb >= 5
                })
                (server, port) = try await Self.startServer(database, port: port)
                let before = try await serverCount("room-a")
                #expect(try await eventually(timeout: 60) { try await serverCount("room-a") > before + 10 }, "the restarted server receives again")

                // The straps stop; everything measured reaches the server.
                await simB.stop()
                await simA.stop()
                #expect(await eventually(timeout: 90) {
                    guard let oa = await a.outbox(), let ob = await b.outbox() else { return false }
                    return oa.pending == 0 && ob.pending == 0
                }, "both outboxes drain")
                runA.signal(SIGTERM)
                runB.signal(SIGTERM)
                #expect(await runA.wait(timeout: 30) == 0)
                #expect(await runB.wait(timeout: 30) == 0)
            }
        }

        let cachedA = try await a.cached(), cachedB = try await b.cached()
        let (stored, owners) = try await PostgresFixture.withClient(database) { c in
            var stored: [String: (gateway: String, key: String)] = [:]
            for try await (id, g, d, s, t) in try await c.query("""
                SELECT id::text, gateway_id, device_id, source, to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') FROM records
                """).decode((String, String, String, String, String).self) {
                stored[id] = (g, "\(d)|\(s)|\(t)")
            }
            var owners: [String: String] = [:]
            for try await (d, s, t, g) in try await c.query("""
                SELECT device_id, source, to_char(second AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'), gateway_id FROM record_seconds
                """).decode((String, String, String, String).self) {
                owners["\(d)|\(s)|\(t)"] = g
            }
            return (stored, owners)
        }
        #expect(cachedA.count > 30 && cachedB.count > 10)
        // Every record a room measured is on the server under its id, or its second belongs to the other room.
        var lost: [String] = []
        var sharedSecondsB = 0
        for (room, records) in [("room-a", cachedA), ("room-b", cachedB)] {
            for r in records {
                let key = "\(r.device)|\(r.source)|\(r.second)"
                if let s = stored[r.id] {
                    if s.gateway != room || owners[key] != room { lost.append("\(room) \(r.id) stored as \(s.gateway)") }
                } else if let owner = owners[key], owner != room {
                    if room == "room-b" { sharedSecondsB += 1 }
                } else {
                    lost.append("\(room) \(r.id) \(key) missing")
                }
            }
        }
        #expect(lost.isEmpty, "records lost or misfiled: \(lost.prefix(10))")
        #expect(stored.count <= cachedA.count + cachedB.count)
        // Nothing twice: each strap-second has one owner, and every stored record is its owner's.
        #expect(stored.values.allSatisfy { owners[$0.key] == $0.gateway })
        let devicesB = Set(cachedB.map(\.device))
        #expect(devicesB.count == 3 && devicesB.isSubset(of: Set(cachedA.map(\.device))), "room B's straps are room A's first three")
        #expect(sharedSecondsB > 0, "some of room B's seconds were room A's")
    }
}
