// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import BackendContract
import BlegateServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TimeZoneFiles

/// The staff page's forms and pages over HTTP, as the browser sends them: members added and
/// edited with the API's messages, classes in the gym's local time with everyone counted,
/// a class page of curves and zones.
@Suite("blegate-server staff page forms and pages")
struct StaffPageTests {
    struct Page {
        var status: Int
        var body: String
        var location: String?
    }

    /// A GET, or a POST of `form` (already encoded), with the staff cookie.
    static func request(_ h: ServerHarness, _ path: String, form: String? = nil, cookie: Bool = true) async throws -> Page {
        var r = HTTPClientRequest(url: h.baseURL + path)
        if cookie { r.headers.add(name: "Cookie", value: "blegate_staff=\(h.staffToken)") }
        if let form {
            r.method = .POST
            r.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            r.body = .bytes(ByteBuffer(string: form))
        }
        let answer = try await ServerHarness.fetch(r, limit: 16 << 20)
        return Page(status: answer.status, body: answer.body, location: answer.headers.first(name: "Location"))
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test("add a member with the form, edit the profile (a bad value refused with the API's message), the member's page")
    func memberForms() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }

        #expect(try await Self.request(h, "/staff/members", form: "name=Ana", cookie: false).status == 401)
        let empty = try await Self.request(h, "/staff/members", form: "name=+&age=")
        #expect(empty.status == 400 && empty.body.contains("name: must be 1 to 80 characters, got 0"))
        let badAge = try await Self.request(h, "/staff/members", form: "name=Ana&age=4")
        #expect(badAge.status == 400 && badAge.body.contains("age: must be a whole number from 5 to 120, got 4"))
        #expect(try await h.store.members().isEmpty)

        let added = try await Self.request(h, "/staff/members", form: "name=Ana+L%C3%B3pez&client_id=&age=34&max_hr=&resting_hr=&weight_kg=61.5&sex=female")
        #expect(added.status == 303, "\(added.body)")
        let location = try #require(added.location)
        #expect(location.hasPrefix("/staff/members/m-") && location.hasSuffix("?added=1"), "\(location)")
        let id = String(location.dropFirst("/staff/members/".count).prefix { $0 != "?" })
        #expect(try await h.store.member(id) == Member(clientID: id, name: "Ana López", age: 34, weightKg: 61.5, sex: "female", straps: []))

        let page = try await Self.request(h, location)
        #expect(page.status == 200 && page.body.contains("Member added.") && page.body.contains("34 y, 61.5 kg, female"))
        #expect(page.body.contains("<option value=\"female\" selected>"))

        // The edit form sends every field; an empty one clears it.
        let refused = try await Self.request(h, "/staff/members/\(id)", form: "name=Ana&age=34&max_hr=110&resting_hr=115&weight_kg=&sex=female")
        #expect(refused.status == 400 && refused.body.contains("resting_hr: must be below max_hr (110), got 115"), "\(refused.status)")
        #expect(try await h.store.member(id)?.maxHR == nil, "a refused form changes nothing")
        let saved = try await Self.request(h, "/staff/members/\(id)", form: "name=Ana+L.&age=35&max_hr=190&resting_hr=50&weight_kg=&sex=female")
        #expect(saved.status == 303 && saved.location == "/staff/members/\(id)?saved=1")
        #expect(try await h.store.member(id) == Member(clientID: id, name: "Ana L.", age: 35, maxHR: 190, restingHR: 50, sex: "female", straps: []))
        #expect(try await Self.request(h, "/staff/members/nobody").status == 404)
        #expect(try await Self.request(h, "/staff/members/x%00").status == 404)
        #expect(try await Self.request(h, "/staff/members/nobody", form: "name=X").status == 404)

        // The list on /staff: name, profile, no workouts yet.
        let staff = try await Self.request(h, "/staff")
        #expect(staff.body.contains("data-member=\"\(id)\"") && staff.body.contains("35 y, max 190, resting 50, female"))
    }

    @Test("classes in local time with everyone counted, paired or not; the class page draws a curve and zones per person")
    func classes() async throws {
        let h = try await ServerHarness.start(timeZone: try TimeZoneFile(file: "Europe/Madrid"))
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("room-1")
        var profile = MemberChanges()
        try profile.set("max_hr", text: "190")
        _ = try await h.store.addMember(name: "Ana", clientID: "m-ana", changes: profile)

        // Ana (a member), c-2 (an id only), and a strap nobody wears, in Spin at 17:05 UTC (18:05 in Madrid).
        let people: [(client: String?, device: String)] = [("m-ana", "C4:A4:00:00:00:01"), ("c-2", "C4:A4:00:00:00:02"), (nil, "C4:A4:00:00:00:09")]
        let zones = [0, 120, 120, 120, 120, 120]
        let workouts = people.map {
            Make.workout(client: $0.client, gateway: "room-1", className: "Spin", start: "2026-11-28T17:05:00.000Z", end: "2026-11-28T17:15:00.000Z",
                         duration: 600, kcal: 123.4, zones: zones, points: 42, device: $0.device)
        }
        let w = try await h.send("/api/v1/workouts", Make.workouts(gateway: "room-1", workouts), token: token)
        #expect(w.json?["inserted"]?.intValue == 3, "\(w.body)")
        for p in people where p.client != "c-2" {
            let records = (0..<600).map { i in
                Make.record(client: p.client, device: p.device, time: String(format: "2026-11-28T17:%02d:%02d.000Z", 5 + i / 60, i % 60), hr: 100 + i / 8)
            }
            let sent = try await h.send("/api/v1/metrics", Make.metrics(gateway: "room-1", records), token: token)
            #expect(sent.json?["inserted"]?.intValue == 600)
        }

        let staff = try await Self.request(h, "/staff")
        let row = try #require(staff.body.components(separatedBy: "<tr data-class=\"Spin\"").dropFirst().first)
        #expect(row.contains("<td data-field=\"start\">2026-11-28 18:05</td>") && row.contains("<td data-field=\"members\">3</td>"), "\(row)")
        let key = try #require(row.components(separatedBy: "href=\"/staff/classes/").dropFirst().first?.prefix { $0 != "\"" })

        let page = try await Self.request(h, "/staff/classes/\(key)")
        #expect(page.status == 200)
        let summaries = page.body.components(separatedBy: "data-testid=\"summary-member\"").dropFirst()
        #expect(summaries.count == 3)
        // By name, the strap nobody wore last.
        #expect(summaries.map { $0.components(separatedBy: "data-member=\"").dropFirst().first?.prefix { $0 != "\"" } }
                == ["m-ana", "c-2", "C4:A4:00:00:00:09"])
        #expect(summaries.allSatisfy { $0.contains("<svg") && $0.contains("<td data-zone=\"1\"") && $0.contains(">2:00</td>") })
        #expect(summaries.allSatisfy { $0.contains("<td data-field=\"points\">42</td>") && $0.contains("<td data-field=\"kcal\">123</td>") })
        let ana = try #require(summaries.first { $0.contains("data-member=\"m-ana\"") })
        #expect(ana.contains("<h3>Ana</h3>") && Self.count("<polyline", in: ana) >= 2 && ana.contains("data-samples=\"600\""))
        let strap = try #require(summaries.first { $0.contains("data-member=\"C4:A4:00:00:00:09\"") })
        #expect(strap.contains("<h3>C4:A4:00:00:00:09</h3>") && strap.contains("<polyline"))
        let noRecords = try #require(summaries.first { $0.contains("data-member=\"c-2\"") })
        #expect(noRecords.contains("data-samples=\"0\"") && !noRecords.contains("<polyline"))
        #expect(page.body.contains("<span data-field=\"start\">2026-11-28 18:05</span>"))
        #expect(try await Self.request(h, "/staff/classes/0-Nothing").status == 404)
        #expect(try await Self.request(h, "/staff/classes/\(key)", cookie: false).status == 401)

        // Ana's page lists the workout in local time.
        let member = try await Self.request(h, "/staff/members/m-ana")
        #expect(member.body.contains("<tr data-workout><td>2026-11-28 18:05</td>") && member.body.contains(">Spin</a>") && member.body.contains("<td>10:00</td>"))
    }
}
