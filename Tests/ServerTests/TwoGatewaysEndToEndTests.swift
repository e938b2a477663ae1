// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import DBus
import Foundation
import PostgresNIO
import Simulator
import Testing

/// Two rooms, each a `blegate run` with its own simulated BlueZ, three straps heard by both,
/// sending to one blegate-server process that is SIGKILLed mid-run and restarted, while a
/// class runs in both rooms. Ground truth is each gateway's own cache: every record it
/// measured is on the server once, or answered as the other gateway's second; every workout
/// it made is on the server once, and each member's workouts of the class from both rooms
/// are one merged workout (docs/server.md, "Workouts heard by two gateways").
@Suite("blegate-server with two blegate run gateways", .serialized)
struct TwoGatewaysEndToEndTests {
    static let seed: UInt64 = 11
    static let className = "Spin 07:00"

    @Test("3 straps heard by both rooms: every record once, one merged workout per member, the server SIGKILLed and restarted mid-run: nothing lost, nothing twice",
          .timeLimit(.minutes(8)))
    func twoRooms() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        let tokens = try await ServerProcess.prepare(database, gateways: ["room-a", "room-b"])
        var (server, port) = try await ServerProcess.start(database, port: 0)
        defer { server.signal(SIGKILL) }
        let backend = "http://127.0.0.1:\(port)"
        let workouts = "[workouts]\nmin_duration = \"5s\""
        let a = try GatewayRoom(id: "room-a", backend: backend, token: tokens[0], extra: workouts)
        let b = try GatewayRoom(id: "room-b", backend: backend, token: tokens[1], extra: workouts)
        var members: [String: String] = [:]    // strap address → member
        var silentFrom = ""                       // when the straps were told to stop (UTC, to the second)

        // Room A's simulator has 5 straps, room B's the first 3 of the same seed: the same
        // addresses, so 3 straps are heard by both rooms and 2 by room A only.
        try await withSimulatorOnPrivateBus({ $0.straps = 5; $0.seed = Self.seed }) { busA, simA in
            try await withSimulatorOnPrivateBus({ $0.straps = 3; $0.seed = Self.seed }) { busB, simB in
                let straps = simA.devices.map(\.address)
                try #require(simB.devices.map(\.address) == Array(straps.prefix(3)), "room B's straps are room A's first three")
                // Each strap's member pairs in every room that hears it: one code per room, one member.
                for (i, s) in straps.enumerated() { members[s] = "member-\(i + 1)" }
                try await GatewayRoom.pair(straps.map { (a, $0, members[$0]!) } + straps.prefix(3).map { (b, $0, members[$0]!) },
                                           database: database)

                let runA = try await a.run(bus: busA.address)
                let runB = try await b.run(bus: busB.address)
                defer { runA.signal(SIGKILL); runB.signal(SIGKILL) }
                #expect(await runA.waitForStdout("ready:", timeout: 60), "\(runA.stdout)\n\(runA.stderr)")
                #expect(await runB.waitForStdout("ready:", timeout: 60), "\(runB.stdout)\n\(runB.stderr)")
                // The class starts in both rooms as their straps connect: any moment of open gym
                // before it is shorter than min_duration and makes no workout.
                let classStart = String(ISO8601DateFormatter().string(from: Date()).prefix(19))
                for room in [a, b] {
                    let started = await room.cli("class start --name \"\(Self.className)\" --type cycle")
                    #expect(started.status == 0, "\(room.id): \(started.out)")
                }

                #expect(try await eventually(timeout: 90) {
                    let na = try await ServerProcess.records(database, gateway: "room-a")
                    let nb = try await ServerProcess.records(database, gateway: "room-b")
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
                (server, port) = try await ServerProcess.start(database, port: port)
                let before = try await ServerProcess.records(database, gateway: "room-a")
                #expect(try await eventually(timeout: 60) { try await ServerProcess.records(database, gateway: "room-a") > before + 10 },
                        "the restarted server receives again")

                // Every strap has been heard in 15 seconds of the class in each room that hears
                // it (a strap that connects late on a loaded machine still makes a workout).
                func heard(_ room: GatewayRoom, _ straps: [String]) async -> Bool {
                    guard let records = try? await room.cached() else { return false }
                    return straps.allSatisfy { s in Set(records.filter { $0.device == s && $0.second >= classStart }.map(\.second)).count >= 15 }
                }
                #expect(await eventually(timeout: 120) {
                    let inA = await heard(a, straps), inB = await heard(b, Array(straps.prefix(3)))
                    return inA && inB
                },
                        "every strap heard in the class: \(runA.stdout.suffix(600)) \(runB.stdout.suffix(600))")

                // The class ends in both rooms, the straps stop; everything measured reaches the server.
                for room in [a, b] {
                    let stopped = await room.cli("class stop")
                    #expect(stopped.status == 0, "\(room.id): \(stopped.out)")
                }
                // Taken before the straps stop: values already on their way when they stop are
                // read after the notify reader's gathering window and may still be pending at
                // SIGTERM, in the cache for the next start (not lost).
                silentFrom = String(ISO8601DateFormatter().string(from: Date()).prefix(19))
                await simB.stop()
                await simA.stop()
                #expect(await eventually(timeout: 90) {
                    guard let oa = await a.outbox(), let ob = await b.outbox() else { return false }
                    return oa.pending == 0 && ob.pending == 0
                }, "both outboxes drain")
                #expect(await eventually(timeout: 60) {
                    let wa = await a.pendingWorkouts(), wb = await b.pendingWorkouts()
                    return wa == 0 && wb == 0
                }, "both rooms' workouts are delivered")
                runA.signal(SIGTERM)
                runB.signal(SIGTERM)
                #expect(await runA.wait(timeout: 30) == 0)
                #expect(await runB.wait(timeout: 30) == 0)
            }
        }
        try await checkRecords(database, a, b, silentFrom: silentFrom)
        try await checkWorkouts(database, a, b, members: members)
    }

    /// Every record a room measured is on the server under its id, or its second belongs to
    /// the other room; each strap-second has one owner. The one exception is a record still
    /// pending in the outbox at shutdown that was made from the second the straps were told
    /// to stop: the HRV engine reports on a strap's last minutes every 5 s after it stops, and
    /// a last value can still be in the reader's gathering window, so one of those can be
    /// appended between the drained outbox and SIGTERM; it waits for the next start.
    func checkRecords(_ database: DatabaseURL, _ a: GatewayRoom, _ b: GatewayRoom, silentFrom: String) async throws {
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
        var lost: [String] = []
        var sharedSecondsB = 0
        var pendingAfterSilence = 0
        for (room, records) in [("room-a", cachedA), ("room-b", cachedB)] {
            for r in records {
                let key = "\(r.device)|\(r.source)|\(r.second)"
                if let s = stored[r.id] {
                    if s.gateway != room || owners[key] != room { lost.append("\(room) \(r.id) stored as \(s.gateway)") }
                } else if let owner = owners[key], owner != room {
                    if room == "room-b" { sharedSecondsB += 1 }
                } else if r.state == "pending", r.second >= silentFrom {
                    pendingAfterSilence += 1
                } else {
                    lost.append("\(room) \(r.id) \(key) missing (cached as \(r.state))")
                }
            }
        }
        #expect(lost.isEmpty, "records lost or misfiled: \(lost.prefix(10))")
        print("two gateways: \(stored.count) records on the server; \(pendingAfterSilence) pending at shutdown, made after the straps went silent")
        #expect(stored.count <= cachedA.count + cachedB.count)
        // Nothing twice: every stored record is its second's owner's.
        #expect(stored.values.allSatisfy { owners[$0.key] == $0.gateway })
        let devicesB = Set(cachedB.map(\.device))
        #expect(devicesB.count == 3 && devicesB.isSubset(of: Set(cachedA.map(\.device))), "room B's straps are room A's first three")
        #expect(sharedSecondsB > 0, "some of room B's seconds were room A's")
    }

    /// Every class workout a room made is on the server once; each member has one merged
    /// workout of the class, from both rooms for a strap both heard, with the fields the
    /// merge rule gives.
    func checkWorkouts(_ database: DatabaseURL, _ a: GatewayRoom, _ b: GatewayRoom, members: [String: String]) async throws {
        let made = try await a.workouts() + b.workouts()
        let classWorkouts = made.filter { $0["class_name"]?.string == Self.className }
        #expect(classWorkouts.count == 8, "one workout per strap per room (5 + 3): \(made.map { $0.text })")
        #expect(classWorkouts.allSatisfy { $0["delivery"]?.string == "delivered" })
        for w in classWorkouts {
            #expect(w["client_id"]?.string == members[w["device_id"]?.string ?? ""], "\(w.text)")
        }

        let (sources, merged) = try await PostgresFixture.withClient(database) { c in
            var sources: [String: (gateway: String, merged: String?)] = [:]
            for try await (id, g, m) in try await c.query("""
                SELECT id::text, gateway_id, merged_id::text FROM workouts WHERE class_name = \(Self.className)
                """).decode((String, String, String?).self) {
                sources[id] = (g, m)
            }
            var merged: [(client: String, count: Int, body: ContractValue)] = []
            for try await (client, n, body) in try await c.query("""
                SELECT client_id, sources, body::text FROM merged_workouts WHERE class_name = \(Self.className)
                """).decode((String, Int, String).self) {
                merged.append((client, n, try ContractValue.parse(body)))
            }
            return (sources, merged)
        }
        // Once each, under the room that made it, despite the SIGKILL.
        #expect(Set(sources.keys) == Set(classWorkouts.compactMap { $0["id"]?.string?.lowercased() }))
        for w in classWorkouts {
            let id = w["id"]?.string?.lowercased() ?? ""
            #expect(sources[id]?.gateway == w["gateway_id"]?.string, "\(id) stored under its room")
        }

        #expect(merged.map(\.client).sorted() == members.values.sorted(), "exactly one merged workout per member")
        for (member, count, body) in merged {
            let own = classWorkouts.filter { $0["client_id"]?.string == member }
                .sorted { ($0["start_time"]?.string ?? "", $0["id"]?.string ?? "") < ($1["start_time"]?.string ?? "", $1["id"]?.string ?? "") }
            let shared = own.count == 2
            #expect(count == own.count && (shared || own.count == 1), "\(member): \(count) sources, \(own.count) made")
            #expect(body["gateway_ids"]?.array?.compactMap(\.string) == (shared ? ["room-a", "room-b"] : ["room-a"]), "\(member)")
            #expect(Set(body["sources"]?.array?.compactMap { $0.string?.lowercased() } ?? [])
                    == Set(own.compactMap { $0["id"]?.string?.lowercased() }), "\(member)")
            #expect(own.allSatisfy { sources[$0["id"]?.string?.lowercased() ?? ""]?.merged != nil }, "\(member): its sources point at the merged one")
            try checkMergedFields(body, own, member: member)
        }
    }

    /// The merge rule for one member: earliest start, latest end, highest max and lowest min;
    /// two rooms that heard the same class (overlapping by at least half) give the figures
    /// of the source with the larger duration × coverage, not their sum.
    func checkMergedFields(_ m: ContractValue, _ own: [ContractValue], member: String) throws {
        func number(_ w: ContractValue, _ key: String) -> Double { w[key]?.number ?? .nan }
        func seconds(_ w: ContractValue, _ key: String) throws -> Double {
            let text = try #require(w[key]?.string)
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = try #require(fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text), "\(key): \(text)")
            return date.timeIntervalSince1970
        }
        let first = try #require(own.first)
        var pick = first
        if own.count == 2 {
            let second = own[1]
            let overlap = min(try seconds(first, "end_time"), try seconds(second, "end_time"))
                - max(try seconds(first, "start_time"), try seconds(second, "start_time"))
            let shorter = min(try seconds(first, "end_time") - seconds(first, "start_time"),
                              try seconds(second, "end_time") - seconds(second, "start_time"))
            try #require(overlap >= shorter / 2, "\(member): both rooms heard the same class (overlap \(overlap) s of \(shorter) s)")
            let weight = { (w: ContractValue) in number(w, "duration_seconds") * number(w, "coverage") }
            pick = weight(first) >= weight(second) ? first : second
        }
        #expect(m["client_id"]?.string == member && m["class_name"]?.string == Self.className)
        #expect(m["start_time"]?.string == own.compactMap { $0["start_time"]?.string }.min(), "\(member): earliest start")
        #expect(m["end_time"]?.string == own.compactMap { $0["end_time"]?.string }.max(), "\(member): latest end")
        #expect(number(m, "max_heart_rate") == own.map { number($0, "max_heart_rate") }.max(), "\(member): highest max")
        #expect(number(m, "min_heart_rate") == own.map { number($0, "min_heart_rate") }.min(), "\(member): lowest min")
        #expect(number(m, "duration_seconds") == number(pick, "duration_seconds"), "\(member): duration of the fuller source")
        #expect(m["seconds_in_zone"]?.array?.map { $0.number ?? -1 } == pick["seconds_in_zone"]?.array?.map { $0.number ?? -1 },
                "\(member): zones of the fuller source")
        for key in ["avg_heart_rate", "effort_points", "trimp"] {
            #expect(abs(number(m, key) - number(pick, key)) <= 0.05 + 1e-9, "\(member): \(key) \(number(m, key)) vs \(number(pick, key))")
        }
        // No profile, no kcal: null in both.
        let kcal = (m["calories_active"]?.number, pick["calories_active"]?.number)
        #expect(kcal.0 == nil && kcal.1 == nil || abs((kcal.0 ?? .nan) - (kcal.1 ?? .nan)) <= 0.05 + 1e-9, "\(member): kcal \(kcal)")
    }
}
