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

    @Test("sign in, see gateways' health, the last class and its members, make a pairing code a gateway can use, sign out",
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
        let workouts = ["c-1", "c-2"].map {
            Make.workout(client: $0, gateway: "room-1", className: "HIIT <7am>", start: "2026-11-25T07:00:00.000Z",
                         end: "2026-11-25T07:45:00.000Z", duration: 2700)
        }
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "room-1", workouts), token: a)

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
        #expect(classes.first?["text"]?.string?.contains(" 2 ") == true)
        #expect(Set((page["members"]?.array ?? []).compactMap { $0["member"]?.string }) == ["c-1", "c-2"])

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
