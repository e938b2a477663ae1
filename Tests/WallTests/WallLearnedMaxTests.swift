// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import Foundation
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A maximum the member beats for 30 s is raised, and remembered across a restart of
/// `blegate run` (the cache's meta table). Every strap is configured with `max_hr = 100`,
/// the lowest allowed; simulated straps working at 130 to 160 bpm hold more than that.
@Suite("The wall remembers a learned maximum")
struct WallLearnedMaxTests {
    @Test("raised after 30 s above it, and still raised after a restart", .timeLimit(.minutes(5)))
    func learned() async throws {
        try #require(await shell("\(WallBrowserTests.python) -c 'import urllib.request'").status == 0)
        let straps = 12
        try await withSimulatorOnPrivateBus({ c in
            c.straps = straps
            c.adapters = 2
            c.seed = 5
            c.rate = 1
        }) { bus, _ in
            let dir = try scratchDirectory()
            let port = try freeLoopbackPort()
            let members = DeviceCatalog.devices(seed: 5, straps: straps, watches: 0)
                .map { "[members.\"\($0.address)\"]\nmax_hr = 100\n" }.joined()
            let config = dir + "/blegate.toml"
            try """
                [gateway]
                state_directory = "\(dir)"
                [status]
                socket = "\(dir)/status.sock"
                [metrics]
                listen = ""
                [display]
                listen = "127.0.0.1:\(port)"
                \(members)
                """.write(toFile: config, atomically: true, encoding: .utf8)
            let command = "'\(BlegateBinary.path)' run --config '\(config)' --bus '\(bus.address)'"

            // Tiles above 110 bpm: (id, hr, pct, est) from the first frame that has any.
            func hardWorkers() async throws -> [(id: String, hr: Int, pct: Int, est: Bool)] {
                let out = await shell("""
                    \(WallBrowserTests.python) -c 'import urllib.request, json
                    r = urllib.request.urlopen("http://127.0.0.1:\(port)/events", timeout=10)
                    for line in r:
                        line = line.decode()
                        if line.startswith("data: "):
                            f = json.loads(line[6:])
                            hard = [[t["id"], t["hr"], t["pct"], t["est"]] for t in f["tiles"] if t["hr"] > 110 and t["state"] == "live"]
                            if hard:
                                print(json.dumps(hard)); break' 2>&1
                    """).out
                let rows = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[Any]], "\(out)")
                return rows.compactMap { r in
                    guard let id = r[0] as? String, let hr = r[1] as? Int, let pct = r[2] as? Int, let est = r[3] as? Bool else { return nil }
                    return (id, hr, pct, est)
                }
            }

            var run = try await BackgroundProcess.start(command)
            #expect(await run.waitForStdout("] connected ", count: straps, timeout: 90), "\(run.stdout)")
            // Beyond the 30 s hold, from the first heart rates: every hard worker's tile uses
            // a learned maximum of 110 or more (no estimate; hr × 100 / pct is the maximum).
            var before: [(id: String, hr: Int, pct: Int, est: Bool)] = []
            let learnedInTime = try await eventually(timeout: 150, every: .seconds(1)) {
                before = try await hardWorkers()
                return !before.isEmpty && before.allSatisfy { $0.pct > 0 && $0.pct < 125 && !$0.est && Double($0.hr) * 100 / Double($0.pct) >= 110 }
            }
            #expect(learnedInTime, "tiles above max_hr 100 still estimated: \(before)")
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")

            // Straight after the restart, well within 30 s: the raised maximum is back.
            run = try await BackgroundProcess.start(command)
            #expect(await eventually(timeout: 60) { await httpStatus("http://127.0.0.1:\(port)/") == 200 })
            // Each percentage must match the maximum learned before (hr × 100 / pct then),
            // not max_hr 100 (which would make the percentage the heart rate itself).
            let learned = Dictionary(before.map { ($0.id, Double($0.hr) * 100 / Double($0.pct)) }, uniquingKeysWith: { a, _ in a })
            let after = try await hardWorkers().filter { learned[$0.id] != nil }
            #expect(!after.isEmpty)
            for w in after {
                let max = learned[w.id]!
                #expect(max >= 110, "\(w.id): learned \(max)")
                let expected = Double(w.hr) * 100 / max
                #expect(abs(Double(w.pct) - expected) <= 3,
                        "\(w.id): \(w.hr) bpm shows \(w.pct) % after the restart, \(Int(expected)) % with the maximum learned before (\(Int(max)))")
            }
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")
        }
    }
}
