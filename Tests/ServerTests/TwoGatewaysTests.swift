// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import Foundation
import Testing

/// One strap heard by two gateways, one member's class seen by both, and what the
/// server knows of each gateway.
@Suite("blegate-server with two gateways")
struct TwoGatewaysTests {
    @Test("a strap heard by both is stored once per second (first gateway wins), each gateway's own records in a second are kept, replays stay duplicates")
    func oncePerSecond() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let a = try await h.store.addGateway("gw-a"), b = try await h.store.addGateway("gw-b")
        let shared = "C6:D9:E9:3F:49:5F"
        // gw-a hears seconds 0..4; gw-b hears seconds 2..6 of the same strap, a few ms apart.
        let fromA = (0..<5).map { Make.record(device: shared, time: "2026-11-25T10:00:0\($0).120Z") }
        let fromB = (2..<7).map { Make.record(device: shared, time: "2026-11-25T10:00:0\($0).180Z") }
        // gw-a's second notification within second 4, and a different strap only gw-b hears.
        let extraA = Make.record(device: shared, time: "2026-11-25T10:00:04.900Z")
        let onlyB = Make.record(device: "F0:00:00:00:00:02", time: "2026-11-25T10:00:03.000Z")

        let ra = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", fromA + [extraA]), token: a)
        #expect(ra.json?["inserted"]?.intValue == 6)
        let rb = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", fromB + [onlyB]), token: b)
        #expect(rb.json?["inserted"]?.intValue == 3)   // seconds 5, 6 and the other strap
        #expect(rb.json?["duplicates"]?.intValue == 3) // seconds 2, 3, 4 were gw-a's
        let rb2 = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", fromB + [onlyB]), token: b)
        #expect(rb2.json?["inserted"]?.intValue == 0 && rb2.json?["duplicates"]?.intValue == 6)

        let hr = try await h.get("/api/v1/members/c-1/heart-rate?limit=1000")
        let points = hr.json?["heart_rate"]?.array ?? []
        let sharedSeconds = points.filter { $0["device_id"]?.string == shared }.compactMap { $0["timestamp"]?.string?.prefix(19) }
        #expect(sharedSeconds.count == 8)                  // 7 seconds, second 4 twice from gw-a
        #expect(Set(sharedSeconds).count == 7)
        #expect(points.filter { $0["gateway_id"]?.string == "gw-b" }.count == 3)
    }

    @Test("one member's class seen by two gateways is one workout: earliest start, latest end, highest max, the better source's sums; successive parts add up")
    func mergedWorkouts() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let a = try await h.store.addGateway("gw-a"), b = try await h.store.addGateway("gw-b")
        // Both rooms heard the whole class: the same effort.
        let wa = Make.workout(gateway: "gw-a", start: "2026-11-25T07:00:00.000Z", end: "2026-11-25T07:45:00.000Z", duration: 2700,
                              maxHR: 176, minHR: 92, kcal: 400, points: 40, coverage: 0.97)
        let wb = Make.workout(gateway: "gw-b", start: "2026-11-25T07:00:30.000Z", end: "2026-11-25T07:45:20.000Z", duration: 2690,
                              maxHR: 179, minHR: 95, kcal: 390, points: 39, coverage: 0.80)
        #expect(try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [wa]), token: a).json?["inserted"]?.intValue == 1)
        #expect(try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-b", [wb]), token: b).json?["inserted"]?.intValue == 1)
        // Another member moved rooms halfway: two successive parts.
        let p1 = Make.workout(client: "c-2", gateway: "gw-a", start: "2026-11-25T07:00:00.000Z", end: "2026-11-25T07:20:00.000Z", duration: 1200,
                              avgHR: 130, kcal: 150, points: 15)
        let p2 = Make.workout(client: "c-2", gateway: "gw-b", start: "2026-11-25T07:22:00.000Z", end: "2026-11-25T07:45:00.000Z", duration: 1380,
                              avgHR: 150, kcal: 200, points: 22)
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [p1]), token: a)
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-b", [p2]), token: b)
        // The same member's next class is separate.
        let later = Make.workout(gateway: "gw-a", className: "Spin 6pm", start: "2026-11-25T18:00:00.000Z", end: "2026-11-25T18:40:00.000Z", duration: 2400)
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [later]), token: a)

        let one = try await h.get("/api/v1/members/c-1/workouts").json?["workouts"]?.array ?? []
        #expect(one.count == 2)
        let hiit = try #require(one.first { $0["class_name"]?.string == "HIIT 7am" })
        #expect(hiit["start_time"]?.string == "2026-11-25T07:00:00.000Z")
        #expect(hiit["end_time"]?.string == "2026-11-25T07:45:20.000Z")
        #expect(hiit["max_heart_rate"]?.intValue == 179)
        #expect(hiit["min_heart_rate"]?.intValue == 92)
        #expect(hiit["calories_active"]?.number == 400)   // gw-a covered more: its sums, not the total
        #expect(hiit["duration_seconds"]?.intValue == 2700)
        #expect(hiit["gateway_ids"]?.array?.compactMap(\.string) == ["gw-a", "gw-b"])
        #expect(hiit["sources"]?.array?.count == 2)

        let two = try #require(try await h.get("/api/v1/members/c-2/workouts").json?["workouts"]?.array?.first)
        #expect(two["duration_seconds"]?.intValue == 2580)
        #expect(two["calories_active"]?.number == 350)
        #expect(two["effort_points"]?.number == 37)
        let weighted = (130.0 * 1200 + 150 * 1380) / 2580
        #expect(abs((two["avg_heart_rate"]?.number ?? 0) - weighted) < 0.06)
        let zones = two["seconds_in_zone"]?.array?.compactMap(\.intValue) ?? []
        #expect(zones.reduce(0, +) == 2580)
        #expect(try await h.store.counts()["workouts"] == 5)
        #expect(try await h.store.counts()["merged_workouts"] == 3)
    }

    @Test("a strap paired in one room: the other room's records and workouts of it are the member's and merge, open gym too; a later pairing to someone else takes over from its time")
    func pairedInOneRoom() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let a = try await h.store.addGateway("gw-a"), b = try await h.store.addGateway("gw-b")
        let strap = "C6:D9:E9:3F:49:5F", stranger = "F0:00:00:00:00:02"
        /// Pairs `strap` through `token`'s gateway, then sets the exchange's time (the server
        /// stamps it now) so the records' times fall before or after it.
        func pair(_ member: String, through token: String, at time: String) async throws {
            let code = try await h.store.createPairingCode(clientID: member, validSeconds: 3600).code
            let answer = try await h.send("/api/v1/pair", "{\"code\":\"\(code)\",\"device\":{\"address\":\"\(strap)\"}}", token: token)
            #expect(answer.status == 200 && answer.json?["client_id"]?.string == member)
            try await PostgresFixture.withClient(h.database) { c in
                _ = try await c.query("UPDATE pairing_codes SET used_at = \(time)::timestamptz WHERE code = \(code)")
            }
        }
        // m-1 pairs the strap in room A at 07:00; room B never hears of it.
        try await pair("m-1", through: a, at: "2026-11-25T07:00:00Z")

        // Room A sends seconds 0..4 with the member, room B seconds 3..8 without: B owns 5..8.
        let fromA = (0..<5).map { Make.record(client: "m-1", device: strap, time: "2026-11-25T07:30:0\($0).100Z") }
        let fromB = (3..<9).map { Make.record(client: nil, device: strap, time: "2026-11-25T07:30:0\($0).200Z") }
        // Before the pairing, a strap never paired, and one the gateway sent with a member: as sent.
        let early = Make.record(client: nil, device: strap, time: "2026-11-25T06:59:58.000Z")
        let unpaired = Make.record(client: nil, device: stranger, time: "2026-11-25T07:30:00.000Z")
        let named = Make.record(client: "c-x", device: strap, time: "2026-11-25T07:31:00.000Z")
        #expect(try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", fromA), token: a).json?["inserted"]?.intValue == 5)
        let rb = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", fromB + [early, unpaired, named]), token: b)
        #expect(rb.json?["inserted"]?.intValue == 7 && rb.json?["duplicates"]?.intValue == 2, "\(rb.body)")

        let history = try await h.get("/api/v1/members/m-1/heart-rate?limit=1000").json?["heart_rate"]?.array ?? []
        let seconds = history.compactMap { $0["timestamp"]?.string.map { String($0.prefix(19)) } }
        #expect(seconds == (0..<9).map { "2026-11-25T07:30:0\($0)" }, "every second once, room B's included: \(seconds)")
        #expect(history.map { $0["gateway_id"]?.string ?? "" } == Array(repeating: "gw-a", count: 5) + Array(repeating: "gw-b", count: 4))
        #expect(try await h.get("/api/v1/members/c-x/heart-rate").json?["heart_rate"]?.array?.count == 1)
        let unattributed = try await PostgresFixture.withClient(h.database) { c in
            var devices: [String] = []
            for try await d in try await c.query("SELECT device_id FROM records WHERE client_id IS NULL ORDER BY ts").decode(String.self) {
                devices.append(d)
            }
            return devices
        }
        #expect(unattributed == [strap, stranger], "before its pairing, and never paired: no member")

        // The class in both rooms, room B's without the member: one merged workout.
        let classA = Make.workout(client: "m-1", gateway: "gw-a", className: "HIIT 8am", start: "2026-11-25T08:00:00.000Z",
                                  end: "2026-11-25T08:45:00.000Z", duration: 2700, maxHR: 176, coverage: 0.9, device: strap)
        let idB = UUID().uuidString.lowercased()
        let classB = Make.workout(id: idB, client: nil, gateway: "gw-b", className: "HIIT 8am", start: "2026-11-25T08:00:30.000Z",
                                  end: "2026-11-25T08:45:20.000Z", duration: 2690, maxHR: 181, coverage: 0.8, device: strap)
        // Open gym: the member moved from room A to room B, the two parts overlap by two minutes.
        let openA = Make.workout(client: "m-1", gateway: "gw-a", className: nil, start: "2026-11-25T09:00:00.000Z",
                                 end: "2026-11-25T09:20:00.000Z", duration: 1200, kcal: 150, points: 15, device: strap)
        let openB = Make.workout(client: nil, gateway: "gw-b", className: nil, start: "2026-11-25T09:18:00.000Z",
                                 end: "2026-11-25T09:40:00.000Z", duration: 1320, kcal: 170, points: 18, device: strap)
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [classA, openA]), token: a)
        #expect(try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-b", [classB, openB]), token: b).json?["inserted"]?.intValue == 2)
        // Room B corrects its workout after late records, still without the member.
        let corrected = Make.workout(id: idB, client: nil, gateway: "gw-b", className: "HIIT 8am", start: "2026-11-25T08:00:30.000Z",
                                     end: "2026-11-25T08:46:10.000Z", duration: 2740, maxHR: 183, coverage: 0.8, device: strap)
        let put = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-b", [corrected]), token: b, method: .PUT)
        #expect(put.json?["duplicates"]?.intValue == 1)

        let workouts = try await h.get("/api/v1/members/m-1/workouts").json?["workouts"]?.array ?? []
        #expect(workouts.count == 2, "\(workouts.map { $0.text })")
        let hiit = try #require(workouts.first { $0["class_name"]?.string == "HIIT 8am" })
        #expect(hiit["client_id"]?.string == "m-1")
        #expect(hiit["gateway_ids"]?.array?.compactMap(\.string) == ["gw-a", "gw-b"])
        #expect(hiit["end_time"]?.string == "2026-11-25T08:46:10.000Z" && hiit["max_heart_rate"]?.intValue == 183)
        let open = try #require(workouts.first { $0["class_name"] == .null })
        #expect(open["gateway_ids"]?.array?.compactMap(\.string) == ["gw-a", "gw-b"])
        #expect(open["start_time"]?.string == "2026-11-25T09:00:00.000Z" && open["end_time"]?.string == "2026-11-25T09:40:00.000Z")
        #expect(open["duration_seconds"]?.intValue == 2520 && open["calories_active"]?.number == 320, "successive parts add up")

        // At noon the strap is paired to m-2 through room B: from then on it is m-2's, before
        // then still m-1's, whichever room sends.
        try await pair("m-2", through: b, at: "2026-11-25T12:00:00Z")
        let late = Make.record(client: nil, device: strap, time: "2026-11-25T12:30:00.000Z")
        let morning = Make.record(client: nil, device: strap, time: "2026-11-25T11:00:00.000Z")
        _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", [late]), token: b)
        _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", [morning]), token: a)
        let noon = Make.workout(client: nil, gateway: "gw-a", className: nil, start: "2026-11-25T12:10:00.000Z",
                                end: "2026-11-25T12:40:00.000Z", duration: 1800, device: strap)
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [noon]), token: a)
        let m2 = try await h.get("/api/v1/members/m-2/heart-rate").json?["heart_rate"]?.array ?? []
        #expect(m2.compactMap { $0["timestamp"]?.string } == ["2026-11-25T12:30:00.000Z"])
        let m1 = try await h.get("/api/v1/members/m-1/heart-rate?limit=1000").json?["heart_rate"]?.array ?? []
        #expect(m1.last?["timestamp"]?.string == "2026-11-25T11:00:00.000Z" && m1.count == 10)
        let m2Workouts = try await h.get("/api/v1/members/m-2/workouts").json?["workouts"]?.array ?? []
        #expect(m2Workouts.compactMap { $0["start_time"]?.string } == ["2026-11-25T12:10:00.000Z"])
        #expect(try await h.get("/api/v1/members/m-1/workouts").json?["workouts"]?.array?.count == 2)
    }

    @Test("GET /api/v1/gateways: each gateway's last contact, outbox depth and version from the request headers")
    func gatewaysEndpoint() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let a = try await h.store.addGateway("gw-a"), b = try await h.store.addGateway("gw-b")
        _ = try await h.store.addGateway("gw-silent")
        _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", []), token: a, outboxDepth: 1234, version: "1.4.0")
        _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", []), token: b, outboxDepth: 0, version: "1.5.0-rc1")
        // A later request without the headers keeps what the gateway said last.
        _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", []), token: a)
        let answer = try await h.get("/api/v1/gateways")
        #expect(answer.status == 200)
        let gateways = answer.json?["gateways"]?.array ?? []
        #expect(gateways.compactMap { $0["id"]?.string } == ["gw-a", "gw-b", "gw-silent"])
        #expect(gateways[0]["outbox_depth"]?.intValue == 1234 && gateways[0]["version"]?.string == "1.4.0")
        #expect(gateways[0]["requests"]?.intValue == 2)
        #expect(gateways[1]["outbox_depth"]?.intValue == 0 && gateways[1]["version"]?.string == "1.5.0-rc1")
        #expect(gateways[0]["last_contact"]?.string?.hasSuffix("Z") == true)
        #expect(gateways[2]["last_contact"] == .null && gateways[2]["requests"]?.intValue == 0)
    }
}
