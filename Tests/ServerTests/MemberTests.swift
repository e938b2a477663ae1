// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import BackendContract
import BlegateServer
import Foundation
import NIOCore
import PostgresNIO
import TestBackend
import Testing

/// Members on the server: the store functions the CLI calls, the gateways' endpoints
/// (`GET /api/v1/members`, `PUT /api/v1/members/{id}`, `POST /api/v1/assignments`) and the
/// attribution of items sent without a client id after assignments.
@Suite("blegate-server members")
struct MemberTests {
    @Test("add, list and set through the store: made-up and given ids, validation with the field, clearing, ids known from codes")
    func storeFunctions() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let s = h.store

        let ana = try await s.addMember(name: "  Ana  ")
        #expect(ana.name == "Ana" && ana.age == nil && ana.straps.isEmpty)
        #expect(ana.clientID.hasPrefix("m-") && ana.clientID.count == 12
                && ana.clientID.dropFirst(2).allSatisfy { "abcdefghijklmnopqrstuvwxyz234567".contains($0) }, "\(ana.clientID)")
        var profile = MemberChanges()
        try profile.set("age", text: "34")
        try profile.set("max_hr", text: "188")
        try profile.set("weight_kg", text: "61,5")
        try profile.set("sex", text: "Female")
        let bo = try await s.addMember(name: "Bo", clientID: "c-77", changes: profile)
        #expect(bo == Member(clientID: "c-77", name: "Bo", age: 34, maxHR: 188, weightKg: 61.5, sex: "female", straps: []))
        await #expect(throws: ServerStore.AdminError.self) { try await s.addMember(name: "Other", clientID: "c-77") }
        do {
            _ = try await s.addMember(name: "Other", clientID: "c-77")
        } catch let e as ServerStore.AdminError {
            #expect(e.description.contains("c-77"))
        }

        // Each bad value names its field and says what is allowed.
        let bad: [(String, String, String)] = [
            ("age", "4", "age: must be a whole number from 5 to 120, got 4"),
            ("age", "33.5", "age: must be a whole number from 5 to 120, got 33.5"),
            ("age", "old", "age: must be a whole number from 5 to 120"),
            ("max_hr", "99", "max_hr: must be a whole number from 100 to 240, got 99"),
            ("resting_hr", "121", "resting_hr: must be a whole number from 25 to 120, got 121"),
            ("weight_kg", "19", "weight_kg: must be a number of kilograms from 20 to 350, got 19"),
            ("sex", "x", "sex: must be female or male"),
            ("name", "", "name: must be 1 to 80 characters, got 0"),
            ("name", String(repeating: "a", count: 81), "name: must be 1 to 80 characters, got 81"),
            ("name", "Ana\u{0}", "name: must not contain control characters (U+0000)"),
            ("name", "Ana\nB", "name: must not contain control characters (U+000A)"),
        ]
        for (field, text, message) in bad {
            var c = MemberChanges()
            do {
                try c.set(field, text: text)
                Issue.record("\(field)=\(text) was accepted")
            } catch {
                #expect(error.description == message)
            }
        }
        #expect(throws: MemberProblem.self) { try MemberChanges.checkedClientID("has space") }

        // The resting rate must stay below the maximum, whichever changes.
        var resting = MemberChanges()
        try resting.set("resting_hr", text: "115")
        try resting.set("max_hr", text: "110")
        await #expect(throws: MemberProblem("resting_hr", "must be below max_hr (110), got 115", conflict: true)) {
            try await s.updateMember("c-77", resting)
        }
        var set = MemberChanges()
        try set.set("resting_hr", text: "52")
        try set.set("age", text: "none")
        try set.set("name", text: "Bo Lund")
        let updated = try await s.updateMember("c-77", set)
        #expect(updated == Member(clientID: "c-77", name: "Bo Lund", maxHR: 188, restingHR: 52, weightKg: 61.5, sex: "female", straps: []))
        #expect(try await s.updateMember("nobody", set) == nil)

        // A client id known only from a pairing code is a member named by its id, and can be given a profile.
        _ = try await s.createPairingCode(clientID: "c-legacy", validSeconds: 60)
        await #expect(throws: ServerStore.AdminError.self) { try await s.addMember(name: "Lee", clientID: "c-legacy") }
        let all = try await s.members()
        #expect(all.map(\.name) == ["Ana", "Bo Lund", "c-legacy"])
        var legacy = MemberChanges()
        try legacy.set("age", text: "50")
        #expect(try await s.updateMember("c-legacy", legacy)?.age == 50)
        #expect(try await s.member("c-legacy")?.name == "c-legacy")
    }

    @Test("GET and PUT /api/v1/members with a gateway's token: every key, null when unknown; 400 with the field, 404, never 5xx")
    func endpoints() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        _ = try await h.store.addMember(name: "Zoe", clientID: "m-zoe")
        _ = try await h.store.addMember(name: "Ana", clientID: "m-ana")

        let listed = try await h.send("/api/v1/members", "", token: token, method: .GET, gzip: false)
        #expect(listed.status == 200)
        #expect(listed.body == #"{"members":[{"age":null,"client_id":"m-ana","max_hr":null,"name":"Ana","resting_hr":null,"sex":null,"straps":[],"weight_kg":null},{"age":null,"client_id":"m-zoe","max_hr":null,"name":"Zoe","resting_hr":null,"sex":null,"straps":[],"weight_kg":null}]}"#)
        #expect(try await h.send("/api/v1/members", "", token: nil, method: .GET, gzip: false).status == 401)
        #expect(try await h.send("/api/v1/members", "", token: h.staffToken, method: .GET, gzip: false).status == 401)
        #expect(try await h.send("/api/v1/members", "{}", token: token).status == 405)

        let put = try await h.send("/api/v1/members/m-ana", #"{"age":34,"max_hr":188,"weight_kg":61.5,"sex":"female"}"#, token: token, method: .PUT)
        #expect(put.status == 200)
        #expect(put.body == #"{"age":34,"client_id":"m-ana","max_hr":188,"name":"Ana","resting_hr":null,"sex":"female","straps":[],"weight_kg":61.5}"#)
        let cleared = try await h.send("/api/v1/members/m-ana", #"{"age":null,"name":"Ana B"}"#, token: token, method: .PUT, gzip: false)
        #expect(cleared.status == 200 && cleared.json?["age"] == .null && cleared.json?["name"]?.string == "Ana B"
                && cleared.json?["max_hr"]?.intValue == 188, "\(cleared.body)")

        let refusals: [(String, String)] = [
            (#"{"age":400}"#, "age: must be a whole number from 5 to 120, got 400"),
            (#"{"age":"34"}"#, "age: must be a whole number from 5 to 120 or null"),
            (#"{"max_hr":150.5}"#, "max_hr: must be a whole number from 100 to 240, got 150.5"),
            (#"{"weight_kg":1000}"#, "weight_kg: must be a number of kilograms from 20 to 350, got 1000"),
            (#"{"sex":"other"}"#, "sex: must be \"female\", \"male\" or null"),
            (#"{"name":null}"#, "name: must be a string; a member's name cannot be cleared"),
            (#"{"name":"   "}"#, "name: must be 1 to 80 characters, got 0"),
            (#"{"name":"a\u0007b"}"#, "name: must not contain control characters (U+0007)"),
            (#"{"height":180}"#, "height: not a member field (name, age, max_hr, resting_hr, weight_kg, sex)"),
            (#"[1]"#, "body must be a JSON object"),
        ]
        for (body, message) in refusals {
            let answer = try await h.send("/api/v1/members/m-ana", body, token: token, method: .PUT)
            #expect(answer.status == 400 && answer.json?["error"]?.string == message, "\(body): \(answer.status) \(answer.body)")
        }
        // Each value in range, but not together with the profile: a conflict, 409.
        let clash = try await h.send("/api/v1/members/m-ana", #"{"resting_hr":120,"max_hr":110}"#, token: token, method: .PUT)
        #expect(clash.status == 409 && clash.json?["error"]?.string == "resting_hr: must be below max_hr (110), got 120", "\(clash.body)")
        let notJSON = try await h.send("/api/v1/members/m-ana", "{age:", token: token, method: .PUT)
        #expect(notJSON.status == 400)
        #expect(try await h.send("/api/v1/members/m-%00", #"{"age":30}"#, token: token, method: .PUT).status == 404)
        let unknown = try await h.send("/api/v1/members/m-nobody", #"{"age":30}"#, token: token, method: .PUT)
        #expect(unknown.status == 404 && unknown.json?["error"]?.string == "unknown member m-nobody")
        #expect(try await h.store.member("m-ana")?.age == nil, "a refused PUT changes nothing")
    }

    @Test("POST /api/v1/assignments: records and workouts sent without a client id follow the latest pairing or assignment")
    func assignments() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        _ = try await h.store.addMember(name: "Ana", clientID: "m-ana")
        let strap = "C4:A4:00:00:00:01"

        /// The latest event's time (a code's use or an assignment), from the database's clock.
        func lastEvent() async throws -> Double {
            try await PostgresFixture.withClient(h.database) { c in
                var t = 0.0
                for try await v in try await c.query("""
                    SELECT extract(epoch FROM greatest((SELECT max(used_at) FROM pairing_codes), (SELECT max(assigned_at) FROM strap_assignments)))::float8
                    """).decode(Double.self) { t = v }
                return t
            }
        }
        func iso(_ t: Double) -> String {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.string(from: Date(timeIntervalSince1970: t))
        }
        /// Sends one record without a client id at `t` and answers whom the server filed it under.
        func attributed(at t: Double) async throws -> String? {
            let id = UUID().uuidString.lowercased()
            let sent = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", [Make.record(id: id, client: nil, device: strap, time: iso(t))]),
                                        token: token)
            #expect(sent.json?["inserted"]?.intValue == 1, "\(sent.body)")
            return try await PostgresFixture.withClient(h.database) { c in
                var who: String?
                for try await v in try await c.query("SELECT client_id FROM records WHERE id = \(id)::uuid").decode(String?.self) { who = v }
                return who
            }
        }
        func assign(_ body: String) async throws -> ServerHarness.Answer {
            try await h.send("/api/v1/assignments", body, token: token)
        }
        func straps(_ id: String) async throws -> [String] {
            try await h.send("/api/v1/members", "", token: token, method: .GET, gzip: false).json?["members"]?.array?
                .first { $0["client_id"]?.string == id }?["straps"]?.array?.compactMap(\.string) ?? []
        }

        let start = Date().timeIntervalSince1970 - 3600
        #expect(try await attributed(at: start) == nil)

        // Paired by code to c-code.
        let code = try await h.store.createPairingCode(clientID: "c-code", validSeconds: 600).code
        #expect(try await h.send("/api/v1/pair", "{\"code\":\"\(code)\",\"device\":{\"address\":\"\(strap)\"}}", token: token).status == 200)
        let paired = try await lastEvent()

        // Assigned to Ana (address sent in lower case): from then on hers, before then still c-code's.
        let a1 = try await assign(#"{"address":"c4:a4:00:00:00:01","client_id":"m-ana","name":"Polar H10 0001","model":"H10"}"#)
        #expect(a1.status == 200 && a1.body == #"{"address":"C4:A4:00:00:00:01","client_id":"m-ana"}"#, "\(a1.body)")
        let assigned = try await lastEvent()
        #expect(assigned > paired)
        #expect(try await attributed(at: (paired + assigned) / 2) == "c-code")
        #expect(try await attributed(at: assigned + 0.01) == "m-ana")
        #expect(try await straps("m-ana") == [strap])
        #expect(try await straps("c-code") == [])
        // A workout sent without a client id, ending after the assignment, is Ana's merged workout.
        let w = Make.workout(client: nil, gateway: "gw-a", start: iso(assigned - 600), end: iso(assigned + 60), duration: 660, device: strap)
        #expect(try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [w]), token: token).json?["inserted"]?.intValue == 1)
        #expect(try await h.get("/api/v1/members/m-ana/workouts").json?["workouts"]?.array?.count == 1)

        // Unassigned: nobody's from then on.
        let a2 = try await assign(#"{"address":"C4:A4:00:00:00:01","client_id":null}"#)
        #expect(a2.status == 200 && a2.body == #"{"address":"C4:A4:00:00:00:01","client_id":null}"#)
        let unassigned = try await lastEvent()
        #expect(try await attributed(at: (assigned + unassigned) / 2) == "m-ana")
        #expect(try await attributed(at: unassigned + 0.01) == nil)
        #expect(try await straps("m-ana") == [])

        // A new pairing by code wins over the unassignment from its own time.
        let code2 = try await h.store.createPairingCode(clientID: "c-code2", validSeconds: 600).code
        #expect(try await h.send("/api/v1/pair", "{\"code\":\"\(code2)\",\"device\":{\"address\":\"\(strap)\"}}", token: token).status == 200)
        let repaired = try await lastEvent()
        #expect(try await attributed(at: repaired + 0.01) == "c-code2")
        #expect(try await straps("c-code2") == [strap])
        // A record sent with a client id keeps it.
        let own = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", [Make.record(client: "c-9", device: strap, time: iso(repaired + 1))]),
                                   token: token)
        #expect(own.json?["inserted"]?.intValue == 1)

        // Refusals: an unknown member 404, bad addresses and bodies 400, never 5xx.
        let unknown = try await assign(#"{"address":"C4:A4:00:00:00:01","client_id":"m-nobody"}"#)
        #expect(unknown.status == 404 && unknown.json?["error"]?.string == "unknown member m-nobody")
        #expect(try await assign(#"{"address":"C4:A4:00:00:00:01","client_id":"m-\u0000"}"#).status == 404)
        let refusals: [(String, String)] = [
            (#"{"address":"C4:A4:00:00:01","client_id":"m-ana"}"#, "address: must be a Bluetooth address AA:BB:CC:DD:EE:FF"),
            (#"{"address":"G4:A4:00:00:00:01","client_id":"m-ana"}"#, "address: must be a Bluetooth address AA:BB:CC:DD:EE:FF"),
            (#"{"address":"C4:A4:00:00:00:011","client_id":"m-ana"}"#, "address: must be a Bluetooth address AA:BB:CC:DD:EE:FF"),
            (#"{"client_id":"m-ana"}"#, "address: must be a Bluetooth address AA:BB:CC:DD:EE:FF"),
            (#"{"address":"C4:A4:00:00:00:01"}"#, "client_id: required, a member's client id or null to unassign"),
            (#"{"address":"C4:A4:00:00:00:01","client_id":7}"#, "client_id: required, a member's client id or null to unassign"),
            (#"{"address":"C4:A4:00:00:00:01","client_id":"m-ana","name":5}"#, "name: must be a string of at most 200 bytes without NUL, or null"),
            (#"{"address":"C4:A4:00:00:00:01","client_id":"m-ana","model":"H\u0000"}"#, "model: must be a string of at most 200 bytes without NUL, or null"),
            (#"{"address":"C4:A4:00:00:00:01","client_id":"m-ana","colour":"red"}"#, "colour: not an assignment field (address, client_id, name, model)"),
        ]
        for (body, message) in refusals {
            let answer = try await assign(body)
            #expect(answer.status == 400 && answer.json?["error"]?.string == message, "\(body): \(answer.status) \(answer.body)")
        }
        #expect(try await h.send("/api/v1/assignments", "", token: token, method: .GET, gzip: false).status == 405)
        #expect(try await h.send("/api/v1/assignments", #"{"address":"C4:A4:00:00:00:01","client_id":null}"#, token: nil).status == 401)
    }

    @Test("the loopback test backend has no members: GET /api/v1/members is a 404, so a gateway keeps its own [members]")
    func testBackendAnswers404() async throws {
        let b = try TestBackend(.init())
        try await b.start()
        defer { Task { await b.stop() } }
        let answer = try await ServerHarness.send(to: b.baseURL + "/api/v1/members", "", token: nil, method: .GET, gzip: false)
        #expect(answer.status == 404 && answer.json?["error"] != nil, "\(answer.status) \(answer.body)")
    }
}
