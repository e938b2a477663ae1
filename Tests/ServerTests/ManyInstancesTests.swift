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
    @Test("3 instances behind HAProxy on PgBouncer (transaction mode), one SIGKILLed with a request inside and restarted: lost 0, twice 0, gateways only retried",
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
            (try await proxy.servers()).filter { $0.key != "BACKEND" && $0.value.status == "UP" }.count == 3
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
                for (_, addresses) in straps { for s in addresses { members[s] = "member-\(members.count + 1)" } }
                try await GatewayRoom.pair(straps.flatMap { room, addresses in addresses.map { (room, $0, members[$0]!) } },
                                           database: direct)
                let runA = try await a.run(bus: busA.address)
                let runB = try await b.run(bus: busB.address)
                defer { runA.signal(SIGKILL); runB.signal(SIGKILL) }
                #expect(await runA.waitForStdout("ready:", timeout: 60), "\(runA.stderr.suffix(800))")
                #expect(await runB.waitForStdout("ready:", timeout: 60), "\(runB.stderr.suffix(800))")
                try await eventually("both rooms deliver through HAProxy", seconds: 90) {
                    let da = await a.outbox()?.delivered ?? 0, db = await b.outbox()?.delivered ?? 0
                    return da >= 20 && db >= 20
                }

                // One instance dies with a request inside it: frozen (SIGSTOP) until HAProxy has
                // handed it one that stays unanswered for 300 ms, then killed. Before HAProxy's
                // checks mark a frozen instance down, the two rooms' requests every 500 ms give
                // it one in all but rare tries; such a try thaws it and freezes it again.
                let victim = 1
                var heldAtKill = 0
                for _ in 0..<5 where heldAtKill == 0 {
                    try await eventually("s2 is up", seconds: 30) { (try await proxy.servers())["s2"]?.status == "UP" }
                    instances[victim].process.signal(SIGSTOP)
                    var heldSince: ContinuousClock.Instant?
                    _ = await eventually(timeout: 10) {
                        let s2 = try? await proxy.servers()["s2"]
                        let held = s2?.current ?? 0
                        if held == 0 { heldSince = nil } else if heldSince == nil { heldSince = .now }
                        if let since = heldSince, ContinuousClock.now - since >= .milliseconds(300) { heldAtKill = held; return true }
                        return s2?.status.hasPrefix("DOWN") == true && held == 0
                    }
                    if heldAtKill == 0 { instances[victim].process.signal(SIGCONT) }
                }
                try #require(heldAtKill > 0, "HAProxy never handed the frozen instance a request")
                func requests(_ result: String) async -> [Int] {
                    var n: [Int] = []
                    for room in [a, b] { n.append(Int(await room.status()?["sync"]?["requests"]?[result]?.number ?? 0)) }
                    return n
                }
                let resentBefore = (try await proxy.servers()).values.map(\.resent).reduce(0, +)
                let answeredBefore = await requests("ok")
                instances[victim].process.signal(SIGKILL)
                _ = await instances[victim].process.wait(timeout: 10)
                // The held request is sent to another instance, or the gateway hears an error
                // and sends its batch again: either way only a retry. HAProxy's counters show a
                // resend only when it also retried a connection: a request it sends again after
                // an empty response (`retry-on empty-response`) shows as its room's next answer,
                // as each gateway has one request in flight.
                try await eventually("the held request is sent again", seconds: 60) {
                    let servers = try await proxy.servers()
                    if servers.values.map(\.resent).reduce(0, +) > resentBefore { return true }
                    guard servers["s2"]?.current == 0 else { return false }
                    let errors = await requests("http_error"), unanswered = await requests("unreachable"), answered = await requests("ok")
                    return (errors + unanswered).reduce(0, +) > 0 || zip(answered, answeredBefore).allSatisfy { $0 > $1 }
                }
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
                let resent = (try await proxy.servers())["BACKEND"]?.resent ?? 0
                print("many instances: \(onServer) heart-rate records on the server, lost \(lost.count), twice \(twice.count); \(pendingAfterSilence) pending at shutdown, made as the straps stopped; \(heldAtKill) request(s) inside the instance killed, \(resent) sent again by HAProxy; requests \(requests)")
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
