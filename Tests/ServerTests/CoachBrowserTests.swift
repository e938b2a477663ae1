// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import Simulator
import Testing

/// A whole class run from the coach page alone, in headless Chromium at 1024×768, on a
/// gateway sending to blegate-server: sign-in refusals, start, two new straps assigned to
/// members from the server's list, one profile edited (it reaches the server), a forged
/// cross-site POST that changes nothing, stop, the summary with curves and deliveries; the
/// server's workouts carry those members and the wall shows their names.
/// BLEGATE_COACH_SHOTS=docs keeps the screenshots.
@Suite("The coach page in headless Chromium", .serialized)
struct CoachBrowserTests {
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("coach_browser.py").path
    }

    @Test("a class from the coach page alone", .timeLimit(.minutes(10)))
    func classFromTheCoachPage() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "no /usr/bin/chromedriver: run scripts/setup.sh")
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("studio-1")
        let names = ["Ana Souza", "Ben Okafor", "Chloé Martin"]
        var ids: [String: String] = [:]
        for name in names { ids[name] = try await h.store.addMember(name: name).clientID }

        try await withSimulatorOnPrivateBus({ c in
            c.straps = 8
            c.adapters = 1
            c.linkLimits = [4]
            c.advertising = 2
            c.seed = 21
        }) { bus, sim in
            let dir = try scratchDirectory()
            let port = try freeLoopbackPort()
            try (token + "\n").write(toFile: dir + "/token", atomically: true, encoding: .utf8)
            chmod(dir + "/token", 0o600)
            try "482913\n".write(toFile: dir + "/coach-pin", atomically: true, encoding: .utf8)
            chmod(dir + "/coach-pin", 0o600)
            let config = dir + "/blegate.toml"
            try """
                [gateway]
                id = "studio-1"
                state_directory = "\(dir)"
                [status]
                socket = "\(dir)/status.sock"
                [backend]
                url = "\(h.baseURL)"
                token_file = "\(dir)/token"
                interval = "1s"
                [metrics]
                listen = ""
                [display]
                listen = "127.0.0.1:\(port)"
                room = "Spin studio"
                [coach]
                pin_file = "\(dir)/coach-pin"
                [workouts]
                min_duration = "5s"

                """.write(toFile: config, atomically: true, encoding: .utf8)
            let run = try await BackgroundProcess.start("'\(BlegateBinary.path)' run --config '\(config)' --bus '\(bus.address)'")
            #expect(await run.waitForStdout("] connected ", count: 4, timeout: 120), "\(run.stdout)")
            let shots = try ProcessInfo.processInfo.environment["BLEGATE_COACH_SHOTS"] ?? scratchDirectory()
            let browse = await shell("/usr/bin/python3 '\(Self.script)' 'http://127.0.0.1:\(port)' --pin 482913 --members '\(names[0]),\(names[1])' --seconds 20 --shots '\(shots)' 2>&1")
            let result = try lastJSON(browse.out)

            #expect(result["no_pin_status"] as? Int == 401, "\(browse.out.suffix(3000))")
            #expect(result["state_without_session"] as? Int == 401)
            #expect(result["signin_form"] as? Bool == true)
            #expect((result["wrong_pin_message"] as? String)?.contains("not right") == true)
            #expect(result["signed_in"] as? Bool == true)
            #expect(result["pin_in_url"] as? Bool == false && result["pin_in_url_after"] as? Bool == false, "no secret in a URL")
            #expect((result["timer_first"] as? String)?.hasSuffix("/ 45:00") == true)
            let assigned = try #require(result["assigned"] as? [[String: Any]])
            #expect(assigned.count == 2 && assigned.allSatisfy { $0["shown"] as? Bool == true }, "\(assigned)")
            #expect(result["profile_saved"] as? Bool == true)
            #expect(result["running_after_forgery"] as? Bool == true, "a forged POST from another site stops nothing")
            #expect(result["tablet_overflow"] as? Bool == false && result["phone_overflow"] as? Bool == false)
            // Straps past the link limit wait, and say why.
            let during = try #require(result["rows_during"] as? [[String: Any]])
            let waiting = during.filter { ($0["state"] as? String)?.hasPrefix("waiting") == true }
            #expect(!waiting.isEmpty, "8 straps on an adapter of 4 links, 2 Polars: some wait: \(during)")
            #expect(waiting.allSatisfy { !($0["why"] as? String ?? "").isEmpty && ($0["text"] as? String ?? "").contains($0["why"] as? String ?? "\u{0}") })
            // The summary: a card with a curve per strap heard in the class, paired or not.
            let cards = try #require(result["summary"] as? [[String: Any]])
            let heard = Set(during.filter { ["streaming", "advertised"].contains($0["state"] as? String ?? "") }.compactMap { $0["address"] as? String })
            #expect(Set(cards.compactMap { $0["strap"] as? String }).isSuperset(of: heard), "\(cards)")
            #expect(cards.allSatisfy { ($0["svg"] as? Int ?? 0) > 0 })
            for a in assigned {
                #expect(cards.contains { $0["strap"] as? String == a["address"] as? String && $0["name"] as? String == a["name"] as? String })
            }
            #expect(result["all_delivered"] as? Bool == true, "every workout reached the backend")
            #expect(result["wall_names"] != nil, "the wall shows the members' names")

            // At the server: the profile, and the class's workouts carry the members.
            let members = try await h.send("/api/v1/members", "", token: token, method: .GET, gzip: false)
            let ana = members.json?["members"]?.array?.first { $0["name"]?.string == names[0] }
            #expect(ana?["age"]?.number == 41 && ana?["max_hr"]?.number == 183 && ana?["weight_kg"]?.number == 72.5, "\(members.body)")
            for a in assigned {
                let address = try #require(a["address"] as? String), client = try #require(ids[a["name"] as? String ?? ""])
                #expect(ana?["straps"] != nil)
                let read = try await h.get("/api/v1/members/\(client)/workouts", token: h.staffToken)
                let ofClass = read.json?["workouts"]?.array?.filter { $0["class_name"]?.string == "Spin 18:00" } ?? []
                #expect(ofClass.count == 1 && ofClass.first?["device_id"]?.string == address, "\(client): \(read.body)")
            }
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")
            _ = sim
        }
    }
}
