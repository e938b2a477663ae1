// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import Testing

/// The staff page as a person uses it, in headless Chromium (chromium-driver,
/// python3-selenium; staff_browser.py drives and reports, this test judges).
@Suite("blegate-server staff page in headless Chromium")
struct StaffPageBrowserTests {
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("staff_browser.py").path
    }

    @Test("sign in, see gateways' health and the last class, add and edit a member, a class page of curves, make a pairing code, sign out",
          .timeLimit(.minutes(5)))
    func staffPage() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "no /usr/bin/chromium: run scripts/setup.sh")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "no /usr/bin/chromedriver: run scripts/setup.sh")
        try #require(await shell("/usr/bin/python3 -c 'import selenium'").status == 0, "no python3-selenium: run scripts/setup.sh")
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let a = try await h.store.addGateway("room-1")
        _ = try await h.store.addGateway("room-2")
        _ = try await h.store.addGateway("old-room")
        #expect(try await h.store.revokeGateway("old-room"))
        _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "room-1", []), token: a, outboxDepth: 17, version: "1.2.3")
        // Two members and a strap nobody wore, with records every 5 s for two of them.
        let people: [(client: String?, device: String)] = [("c-1", "A0:9E:1A:00:00:01"), ("c-2", "A0:9E:1A:00:00:02"), (nil, "A0:9E:1A:00:00:09")]
        let workouts = people.map {
            Make.workout(client: $0.client, gateway: "room-1", className: "HIIT <7am>", start: "2026-11-25T07:00:00.000Z",
                         end: "2026-11-25T07:45:00.000Z", duration: 2700, device: $0.device)
        }
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "room-1", workouts), token: a)
        for p in people where p.client != "c-2" {
            let records = (0..<540).map { i in
                Make.record(client: p.client, device: p.device, time: String(format: "2026-11-25T07:%02d:%02d.000Z", i * 5 / 60, i * 5 % 60),
                            hr: 95 + i / 6)
            }
            _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "room-1", records), token: a)
        }

        let run = await shell("/usr/bin/python3 '\(Self.script)' '\(h.baseURL)' '\(h.staffToken)' member-42 2>&1")
        let line = run.out.split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init) ?? ""
        let page = try #require(try? ContractValue.parse(line), "staff_browser.py: \(run.out)")

        #expect(page["wrong_token_message"]?.string == "That staff token is not valid.")
        let health = Dictionary(uniqueKeysWithValues: (page["gateways"]?.array ?? []).compactMap { g in
            g["gateway"]?.string.map { ($0, g["health"]?.string ?? "") }
        })
        #expect(health == ["room-1": "online", "room-2": "never seen", "old-room": "revoked"])
        let room1 = page["gateways"]?.array?.first { $0["gateway"]?.string == "room-1" }
        #expect(room1?["text"]?.string?.contains("1.2.3") == true && room1?["text"]?.string?.contains("17") == true)
        let classes = page["classes"]?.array ?? []
        #expect(classes.compactMap { $0["class"]?.string } == ["HIIT <7am>"])   // escaped in HTML, shown as typed
        #expect(classes.first?["text"]?.string?.contains("2026-11-25 07:00 3 ") == true, "\(classes)")   // everyone, the unpaired strap too
        #expect(Set((page["members"]?.array ?? []).compactMap { $0["member"]?.string }) == ["c-1", "c-2"])

        // A member added and edited on the page, with the API's message for a bad value.
        let added = try #require(page["added"]?["member"]?.string)
        #expect(added.hasPrefix("m-") && page["added"]?["profile"]?.string == "41 y")
        #expect(page["edit_refused"]?.string == "max_hr: must be a whole number from 100 to 240, got 300")
        #expect(page["edited"]?.string == "41 y, max 190, resting 55")
        #expect(try await h.store.member(added) == Member(clientID: added, name: "Dana Q", age: 41, maxHR: 190, restingHR: 55, straps: []))

        // The class page: one summary per person with a curve; lines where the server holds records.
        #expect(page["class_page"]?["class"]?.string == "HIIT <7am>")
        let summaries = page["class_page"]?["people"]?.array ?? []
        #expect(Set(summaries.compactMap { $0["member"]?.string }) == ["c-1", "c-2", "A0:9E:1A:00:00:09"], "\(summaries)")
        #expect(summaries.allSatisfy { $0["svg"]?.intValue == 1 && $0["zone1"]?.string == "9:00" }, "\(summaries)")
        let lines = Dictionary(uniqueKeysWithValues: summaries.compactMap { s in s["member"]?.string.map { ($0, s["lines"]?.intValue ?? -1) } })
        #expect((lines["c-1"] ?? 0) >= 2 && (lines["A0:9E:1A:00:00:09"] ?? 0) >= 2 && lines["c-2"] == 0, "\(lines)")

        // The export link downloads the member's CSV with the page's cookie: a header and one workout.
        #expect(page["csv"]?["status"]?.number == 200 && page["csv"]?["lines"]?.number == 2)
        let noCookie = try await h.get("/staff/members/c-1/workouts.csv")
        #expect(noCookie.status == 401)
        let code = try #require(page["new_code"]?.string)
        #expect(page["codes"]?.array?.contains { $0["code"]?.string == code && $0["state"]?.string == "open" } == true)
        let paired = try await h.send("/api/v1/pair", "{\"code\":\"\(code)\",\"device\":{\"address\":\"A0:9E:1A:00:00:42\"}}", token: a)
        #expect(paired.body == #"{"client_id":"member-42"}"#)
        #expect(page["signed_out"] == .bool(true))
    }
}
