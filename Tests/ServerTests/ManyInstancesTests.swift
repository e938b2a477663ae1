// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import PostgresNIO
import Simulator
import Testing

/// Three blegate-server processes behind HAProxy, sharing one PostgreSQL through PgBouncer
/// in transaction mode, as a chain runs them (docs/server.md, "Many instances"). Two rooms'
/// `blegate run` send through HAProxy while one instance is SIGKILLed and restarted. Ground
/// truth is each gateway's own cache, read back through the server's heart-rate API (so the
/// check does not depend on how the server stores records): every heart-rate record is on
/// the server once.
@Suite("blegate-server: three instances, HAProxy and PgBouncer", .serialized)
struct ManyInstancesTests {
    @Test("3 instances behind HAProxy on PgBouncer (transaction mode), one SIGKILLed mid-run and restarted: lost 0, twice 0, gateways only retried",
          .timeLimit(.minutes(6)))
    func killOneOfThree() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let direct = try await PostgresFixture.database()
        let socket = try #require(direct.socketDirectory, "the test cluster listens on a unix socket")
        let rooms = ["room-a", "room-b"]
        let tokens = try await ServerProcess.prepare(direct, gateways: rooms)
        let bouncer = try await PgBouncerProcess.start(socketDirectory: socket)
        defer { bouncer.process.signal(SIGTERM) }
        let pooled = try bouncer.url(for: direct)

        // All three migrate at once through PgBouncer: each step once (transaction locks).
        var instances: [(process: BackgroundProcess, port: Int)] = []
        defer { for i in instances { i.process.signal(SIGKILL) } }
        for _ in 0..<3 { instances.append(try await ServerProcess.start(pooled, port: 0)) }
        let proxy = try await HAProxyProcess.start(backends: instances.map(\.port))
        defer { proxy.process.signal(SIGTERM) }
        try await eventually("HAProxy sees the three instances up", seconds: 30) {
            (try await proxy.servers()).values.filter { $0.status == "UP" }.count == 3
        }
        let backend = "http://127.0.0.1:\(proxy.port)"

        // Each room's straps are paired to members, so the heart-rate API can read them back.
        let seeds: [UInt64] = [31, 32]
        var members: [String: String] = [:]
        try await withSimulatorOnPrivateBus({ $0.straps = 3; $0.seed = seeds[0] }) { busA, simA in
            try await withSimulatorOnPrivateBus({ $0.straps = 3; $0.seed = seeds[1] }) { busB, simB in
                let a = try GatewayRoom(id: rooms[0], backend: backend, token: tokens[0])
                let b = try GatewayRoom(id: rooms[1], backend: backend, token: tokens[1])
                let straps = [(a, simA.devices.map(\.address)), (b, simB.devices.map(\.address))]
                try #require(Set(straps[0].1).isDisjoint(with: straps[1].1), "the rooms' straps differ")
                for (room, addresses) in straps {
                    for s in addresses {
                        let member = "member-\(members.count + 1)"
                        members[s] = member
                        let code = try await PostgresFixture.withClient(direct) { c in
                            try await ServerStore(client: c, logger: .init(label: "fleet")).createPairingCode(clientID: member, validSeconds: 3600).code
                        }
                        let paired = await room.cli("pair --device \(s) --code \(code)")
                        #expect(paired.status == 0, "\(room.id) \(s): \(paired.out)")
                    }
                }
                let runA = try await a.run(bus: busA.address)
                let runB = try await b.run(bus: busB.address)
                defer { runA.signal(SIGKILL); runB.signal(SIGKILL) }
                #expect(await runA.waitForStdout("ready:", timeout: 60), "\(runA.stderr.suffix(800))")
                #expect(await runB.waitForStdout("ready:", timeout: 60), "\(runB.stderr.suffix(800))")
                try await eventually("both rooms deliver through HAProxy", seconds: 90) {
                    let da = await a.outbox()?.delivered ?? 0, db = await b.outbox()?.delivered ?? 0
                    return da >= 20 && db >= 20
                }

                // One instance dies mid-run; HAProxy takes it out, the others carry on.
                let victim = 1
                instances[victim].process.signal(SIGKILL)
                _ = await instances[victim].process.wait(timeout: 10)
                try await eventually("HAProxy marks s2 down", seconds: 30) { (try await proxy.servers())["s2"]?.status.hasPrefix("DOWN") == true }
                let deliveredWhileDown = (await a.outbox()?.delivered ?? 0, await b.outbox()?.delivered ?? 0)
                try await eventually("delivery goes on with two instances", seconds: 60) {
                    let da = await a.outbox()?.delivered ?? 0, db = await b.outbox()?.delivered ?? 0
                    return da >= deliveredWhileDown.0 + 10 && db >= deliveredWhileDown.1 + 10
                }
                instances[victim] = try await ServerProcess.start(pooled, port: instances[victim].port)
                let before = (try await proxy.servers())["s2"]?.sessions ?? 0
                try await eventually("the restarted instance is up and sent requests again", seconds: 60) {
                    guard let s2 = try await proxy.servers()["s2"] else { return false }
                    return s2.status == "UP" && s2.sessions > before + 2
                }

                let silentFrom = Date()
                await simA.stop()
                await simB.stop()
                try await eventually("both outboxes drain", seconds: 90) {
                    guard let oa = await a.outbox(), let ob = await b.outbox() else { return false }
                    return oa.pending == 0 && ob.pending == 0
                }
                var requests: [String] = []
                for (room, run) in [(a, runA), (b, runB)] {
                    let status = await room.status()
                    #expect(status?["outbox"]?["quarantined"]?.number ?? 0 == 0, "\(room.id): nothing refused")
                    requests.append("\(room.id) \(status?["sync"]?["requests"]?.text ?? "?")")
                    run.signal(SIGTERM)
                    #expect(await run.wait(timeout: 30) == 0)
                }

                // Every heart-rate record a room made is on the server once, under its room.
                let staff = try await PostgresFixture.withClient(direct) { c in
                    try await ServerStore(client: c, logger: .init(label: "fleet")).addStaff("fleet-test")
                }
                var lost: [String] = [], twice: [String] = []
                var onServer = 0, pendingAfterSilence = 0
                for (room, addresses) in straps {
                    let cached = try await heartRateRecords(room)
                    #expect(cached.count > 30, "\(room.id) made records")
                    for strap in addresses {
                        let points = try await serverPoints(backend, member: members[strap]!, staff: staff)
                        onServer += points.count
                        var stored: [String: Int] = [:]
                        for p in points where p.device == strap {
                            stored[p.key, default: 0] += 1
                            if p.gateway != room.id { lost.append("\(p.key) stored under \(p.gateway)") }
                        }
                        twice += stored.filter { $0.value > 1 }.map(\.key)
                        let mine = cached.filter { $0.device == strap }
                        for r in mine where stored[r.key] == nil {
                            if r.state == "pending", r.time >= silentFrom.addingTimeInterval(-1) { pendingAfterSilence += 1 } else { lost.append("\(r.key) (\(r.state))") }
                        }
                        let made = Set(mine.map(\.key))
                        twice += stored.keys.filter { !made.contains($0) }.map { "\($0) not made by \(room.id)" }
                    }
                }
                #expect(lost.isEmpty, "lost: \(lost.prefix(10))")
                #expect(twice.isEmpty, "twice: \(twice.prefix(10))")
                print("many instances: \(onServer) heart-rate records on the server, lost \(lost.count), twice \(twice.count); \(pendingAfterSilence) pending at shutdown, made as the straps stopped; requests \(requests)")
            }
        }
    }

    struct CachedRecord {
        var device: String
        var time: Date
        var state: String
        var key: String { "\(device)|\(Int64((time.timeIntervalSince1970 * 1000).rounded()))" }
    }

    /// The room's cached records that carry a heart rate (the ones the heart-rate API returns).
    func heartRateRecords(_ room: GatewayRoom) async throws -> [CachedRecord] {
        let (out, code) = await shell("\(room.blegate) cache export --since all --config '\(room.config)'")
        guard code == 0 else { throw TestSupportError("cache export: \(out)") }
        return out.split(separator: "\n").compactMap { line in
            guard let j = try? ContractValue.parse(String(line)), let d = j["device_id"]?.string, let t = j["timestamp"]?.string,
                  let time = Self.date(t), let state = j["state"]?.string, j["metrics"]?["hr"]?.number != nil else { return nil }
            return CachedRecord(device: d, time: time, state: state)
        }
    }

    /// Every heart-rate point of a member, page by page, through the load balancer.
    func serverPoints(_ backend: String, member: String, staff: String) async throws -> [(device: String, gateway: String, key: String)] {
        var out: [(String, String, String)] = []
        var cursor: String?
        repeat {
            var url = "\(backend)/api/v1/members/\(member)/heart-rate?limit=1000"
            if let cursor { url += "&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)" }
            let answer = try await ServerHarness.send(to: url, "", token: staff, method: .GET, gzip: false)
            guard answer.status == 200, let page = try? ContractValue.parse(answer.body) else {
                throw TestSupportError("heart-rate of \(member): \(answer.status) \(answer.body)")
            }
            for p in page["heart_rate"]?.array ?? [] {
                guard let d = p["device_id"]?.string, let g = p["gateway_id"]?.string, let t = p["timestamp"]?.string, let time = Self.date(t) else { continue }
                out.append((d, g, "\(d)|\(Int64((time.timeIntervalSince1970 * 1000).rounded()))"))
            }
            cursor = page["next_cursor"]?.string
        } while cursor != nil
        return out
    }

    static func date(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
