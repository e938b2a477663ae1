// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
import Testing
import TestBackend

/// The coach page of a gateway whose backend keeps no members (the loopback test
/// backend answers 404): the list is the configuration's `[members]` keyed by client id,
/// assigning pairs in the cache, profiles are refused with where to edit them. Driven over
/// HTTP with a cookie jar, as the page does.
@Suite("The coach page with the configuration's members", .serialized)
struct CoachConfigMembersTests {
    /// Signs in, then runs `steps` (method, path, JSON body) with the session's token; prints
    /// one JSON line: each step's status and body.
    static let client = #"""
    import http.cookiejar, json, re, sys, urllib.request, urllib.error
    base, pin, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    jar = http.cookiejar.CookieJar()
    op = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    def call(method, path, body=None, headers=None):
        r = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
        try:
            resp = op.open(r, timeout=10)
            return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
    out = {"signin": call("POST", "/coach/signin", ("pin=" + pin).encode(), {"Content-Type": "application/x-www-form-urlencoded"})[0]}
    page = call("GET", "/coach")[1]
    m = re.search(r'name="csrf" content="([0-9a-f]+)"', page)
    csrf = m.group(1) if m else ""
    out["steps"] = []
    for method, path, body in steps:
        h = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
        status, text = call(method, path, json.dumps(body).encode() if body is not None else None, h)
        out["steps"].append({"status": status, "body": json.loads(text) if text.startswith("{") else text})
    print(json.dumps(out))
    """#

    func drive(_ base: String, _ steps: String) async throws -> [String: Any] {
        let r = await shell("/usr/bin/python3 -c '\(Self.client.replacingOccurrences(of: "'", with: "'\\''"))' '\(base)' 482913 '\(steps)' 2>&1")
        return try lastJSON(r.out)
    }

    @Test("members from [members], assign and unassign, profiles refused with the fix", .timeLimit(.minutes(4)))
    func configMembers() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 2
            c.seed = 4
        }) { bus, sim in
            let f = try RunFixture()
            let port = try freeLoopbackPort()
            try f.writeSecret(f.dir + "/coach-pin", "482913\n")
            try f.writeConfig(backendURL: backend.baseURL, extra: """
                [display]
                listen = "127.0.0.1:\(port)"
                room = "Studio B"
                [coach]
                pin_file = "\(f.dir)/coach-pin"
                [members."client-9"]
                name = "Dana"
                age = 38

                """)
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("] connected ", count: 2, timeout: 120), "\(run.stdout)")
            let base = "http://127.0.0.1:\(port)"
            let strap = try #require(sim.devices.first?.address)
            let steps = """
                [["GET","/coach/api/state",null],
                 ["POST","/coach/api/straps/assign",{"address":"\(strap.lowercased())","client_id":"client-9"}],
                 ["POST","/coach/api/members/profile",{"client_id":"client-9","age":39}],
                 ["POST","/coach/api/straps/assign",{"address":"\(strap)","client_id":"nobody"}]]
                """.replacingOccurrences(of: "\n", with: "")
            let out = try await drive(base, steps)
            #expect(out["signin"] as? Int == 200, "\(out)")
            let s = try #require(out["steps"] as? [[String: Any]])
            let state = try #require(s[0]["body"] as? [String: Any])
            #expect(state["room"] as? String == "Studio B")
            #expect(state["members_source"] as? String == "config")
            #expect((state["members"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Dana"])
            #expect((state["straps"] as? [[String: Any]])?.count == 2)

            #expect(s[1]["status"] as? Int == 200, "\(s[1])")
            let assigned = (s[1]["body"] as? [String: Any])?["straps"] as? [[String: Any]]
            let row = assigned?.first { $0["address"] as? String == strap }
            #expect((row?["member"] as? [String: Any])?["name"] as? String == "Dana", "\(s[1])")
            let devices = await f.cli("devices --json")
            #expect(devices.out.contains("\"client_id\":\"client-9\""), "\(devices.out)")

            #expect(s[2]["status"] as? Int == 409)
            #expect(((s[2]["body"] as? [String: Any])?["error"] as? String)?.contains("[members]") == true, "\(s[2])")
            #expect(s[3]["status"] as? Int == 400, "an unknown member: \(s[3])")
            let unassign = try await drive(base, #"[["POST","/coach/api/straps/unassign",{"address":"\#(strap)"}]]"#)
            #expect((unassign["steps"] as? [[String: Any]])?.first?["status"] as? Int == 200, "\(unassign)")
            let after = await f.cli("devices --json")
            #expect(!after.out.contains("client-9"), "\(after.out)")
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")
        }
    }
}
