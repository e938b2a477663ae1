// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import Foundation
import Simulator
import Testing
import TestBackend
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// The wall as a gym sees it: 40 simulated straps → `blegate run` → the page in headless
/// Chromium (chromium-driver, python3-selenium; Tests/WallTests/wall_browser.py drives
/// it and reports, this test judges). Ground truth for heart rates is the loopback
/// backend: each value on screen must be the heart rate of the record it came from.
///
/// Set BLEGATE_WALL_SHOTS=DIR to keep the screenshots (docs/ holds a run's).
@Suite("The wall in headless Chromium", .serialized)
struct WallBrowserTests {
    static let straps = 40
    static let seed: UInt64 = 5
    static let python = "/usr/bin/python3"
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("wall_browser.py").path
    }

    @Test("40 tiles at 1920×1080 and 1280×720 without scrolling, heart rates follow the records, a stopped strap goes stale then gone, the page survives a gateway restart",
          .timeLimit(.minutes(12)))
    func wall() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "no /usr/bin/chromium: run scripts/setup.sh")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "no /usr/bin/chromedriver: run scripts/setup.sh")
        try #require(await shell("\(Self.python) -c 'import selenium'").status == 0, "no python3-selenium: run scripts/setup.sh")

        let backend = try TestBackend(.init(token: "wall-test-token"))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulatorOnPrivateBus({ c in
            c.straps = Self.straps
            c.adapters = (Self.straps + 6) / 7
            c.seed = Self.seed
            c.rate = 1
        }) { bus, sim in
            let dir = try scratchDirectory()
            let port = try freeLoopbackPort()
            let url = "http://127.0.0.1:\(port)/"
            let config = dir + "/blegate.toml"
            try "wall-test-token\n".write(toFile: dir + "/token", atomically: true, encoding: .utf8)
            chmod(dir + "/token", 0o600)
            let catalog = DeviceCatalog.devices(seed: Self.seed, straps: Self.straps, watches: 0)
            try """
                [gateway]
                id = "wall-test"
                state_directory = "\(dir)"
                [status]
                socket = "\(dir)/status.sock"
                [backend]
                url = "\(backend.baseURL)"
                token_file = "\(dir)/token"
                interval = "1s"
                [metrics]
                listen = ""
                [display]
                listen = "127.0.0.1:\(port)"
                gym_name = "Wall Test Gym"
                [members."\(catalog[0].address)"]
                name = "Ana"
                age = 34
                weight_kg = 62
                sex = "female"
                [members."\(catalog[3].address)"]
                name = "Ben"
                age = 45
                weight_kg = 84
                sex = "male"
                resting_hr = 60
                [members."\(catalog[5].address)"]
                name = "Chloe"
                max_hr = 176
                [members."\(catalog[12].address)"]
                name = "Dev"
                age = 52

                """.write(toFile: config, atomically: true, encoding: .utf8)
            let command = "'\(BlegateBinary.path)' run --config '\(config)' --bus '\(bus.address)'"

            let started = ContinuousClock.now
            var run = try await BackgroundProcess.start(command)
            #expect(await eventually(timeout: 30) { await httpStatus(url) == 200 }, "GET / did not answer 200 within 30 s: \(run.stderr)")
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(await run.waitForStdout("] connected ", count: Self.straps, timeout: 120), "\(run.stdout)")

            // Layout and heart rates, at both sizes.
            let shots = ProcessInfo.processInfo.environment["BLEGATE_WALL_SHOTS"] ?? dir
            let layout = try await browser("layout '\(url)' --tiles \(Self.straps) --seconds 8 --shots '\(shots)'")
            let sizes = try #require(layout["sizes"] as? [[String: Any]])
            #expect(sizes.map { $0["size"] as? String } == ["1920x1080", "1280x720"])
            var samples: [(id: String, hr: Int, t: Int64)] = []
            for s in sizes {
                let size = s["size"] as? String ?? "?"
                #expect(s["reached"] as? Bool == true, "\(size): the 40 tiles never all showed live")
                #expect(s["tiles"] as? Int == Self.straps, "\(size): \(s["tiles"] ?? "?") tiles")
                #expect(s["fresh"] as? Int == Self.straps, "\(size): \(s["fresh"] ?? "?") live tiles")
                #expect((s["problems"] as? [String])?.isEmpty == true, "\(size): \(s["problems"] ?? "")")
                let v = try #require(s["viewport"] as? [Int])
                #expect(v[2] <= v[0] && v[3] <= v[1] && v[4] <= v[0] && v[5] <= v[1], "\(size) scrolls: \(v)")
                for case let x as [Any] in s["samples"] as? [Any] ?? [] {
                    if let id = x[0] as? String, let hr = x[1] as? Int, let t = x[2] as? Int { samples.append((id, hr, Int64(t))) }
                }
            }
            #expect(Set(samples.map(\.id)).count == Self.straps, "heart rates seen for \(Set(samples.map(\.id)).count) straps")
            // Every value shown is the heart rate of the record with that device and timestamp.
            func unmatched() -> [String] {
                var index: [String: Double] = [:]
                for r in backend.store.records where r.json["source"]?.string == "ble_hrm" {
                    guard let hr = r.json["metrics"]?["hr"]?.number, let ts = UTCTimestamp(iso8601: r.timestamp) else { continue }
                    index["\(r.deviceID)@\(ts.millisecondsSince1970)"] = hr
                }
                return samples.compactMap { s in
                    guard let hr = index["\(s.id)@\(s.t)"] else { return "\(s.id)@\(s.t): no such record" }
                    return Int(hr.rounded()) == s.hr ? nil : "\(s.id)@\(s.t): page \(s.hr), record \(hr)"
                }
            }
            #expect(samples.count >= Self.straps * 8, "only \(samples.count) heart rates sampled")
            #expect(await eventually(timeout: 60) { unmatched().isEmpty }, "\(unmatched().prefix(10))")

            // A strap that stops (no advertising, link lost): stale within 10 s, then gone, then removed.
            let stopped = catalog[7].address
            let since = UTCTimestamp.now.millisecondsSince1970
            await sim.stopAdvertising(stopped)
            #expect(await sim.linkLoss(stopped) == 1)
            let stale = try await browser("stale '\(url)' --device '\(stopped)' --since \(since) --tiles \(Self.straps)")
            let seen = try #require(stale["first_seen_ms"] as? [String: Double])
            let staleAt = try #require(seen["stale"], "never stale: \(seen)")
            #expect(staleAt <= 10_000, "stale after \(staleAt) ms")
            #expect(seen["gone"].map { $0 > staleAt } == true, "\(seen)")
            #expect(seen["absent"].map { $0 > (seen["gone"] ?? .infinity) } == true, "\(seen)")
            #expect((stale["others_stale_or_gone"] as? [Any])?.isEmpty == true, "straps still sending shown stale: \(stale["others_stale_or_gone"] ?? "")")

            // The gateway is killed and started again; the page says so and comes back by itself.
            let watcher = try await BackgroundProcess.start("\(Self.python) '\(Self.script)' restart '\(url)' --tiles \(Self.straps - 1)")
            #expect(await watcher.waitForStdout("# READY", timeout: 150), "\(watcher.stdout)\n\(watcher.stderr)")
            run.signal(SIGKILL)
            _ = await run.wait(timeout: 30)
            #expect(await watcher.waitForStdout("# OFFLINE", timeout: 60), "\(watcher.stdout)\n\(watcher.stderr)")
            run = try await BackgroundProcess.start(command)
            #expect(await watcher.wait(timeout: 240) == 0, "\(watcher.stderr)")
            let restart = try lastJSON(watcher.stdout)
            #expect(restart["offline"] as? Bool == true)
            #expect((restart["banner"] as? String)?.contains("Lost the gateway") == true, "\(restart["banner"] ?? "")")
            #expect(restart["recovered"] as? Bool == true, "\(restart)")
            #expect(restart["marker"] as? String == "no reload", "the page reloaded itself")
            // Most straps are back on it (reconnecting them all is the gateway's work, tested elsewhere).
            #expect((restart["fresh_tiles"] as? Int ?? 0) >= Self.straps * 3 / 4,
                    "\(restart["fresh_tiles"] ?? "?") fresh tiles after the restart; gateway: \(run.stdout.components("] connected ")) connected")

            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")
        }
    }

    @Test("the demo's room: 40 straps, links for 11: the straps waiting for a link have tiles saying so",
          .timeLimit(.minutes(6)))
    func waitingRoom() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "no /usr/bin/chromedriver: run scripts/setup.sh")
        try await withSimulatorOnPrivateBus({ c in
            c.straps = Self.straps
            c.adapters = 2
            c.linkLimits = [4, 7]
            c.advertising = Self.straps / 4
            c.advertisingOnly = Self.straps / 8
            c.seed = Self.seed
        }) { bus, _ in
            let dir = try scratchDirectory()
            let port = try freeLoopbackPort()
            let config = dir + "/blegate.toml"
            try """
                [gateway]
                id = "wall-waiting"
                state_directory = "\(dir)"
                [status]
                socket = "\(dir)/status.sock"
                [metrics]
                listen = ""
                [display]
                listen = "127.0.0.1:\(port)"
                room = "Spin studio"

                """.write(toFile: config, atomically: true, encoding: .utf8)
            let run = try await BackgroundProcess.start("'\(BlegateBinary.path)' run --config '\(config)' --bus '\(bus.address)'")
            #expect(await run.waitForStdout("] connected ", count: 11, timeout: 120), "\(run.stdout)")
            let shots = ProcessInfo.processInfo.environment["BLEGATE_WALL_SHOTS"] ?? dir
            let layout = try await browser("layout 'http://127.0.0.1:\(port)/' --tiles 11 --seconds 4 --shots '\(shots)' --prefix wall-waiting")
            for s in try #require(layout["sizes"] as? [[String: Any]]) {
                let size = s["size"] as? String ?? "?"
                #expect(s["tiles"] as? Int == Self.straps, "\(size): every strap heard has a tile: \(s)")
                #expect((s["waiting"] as? Int ?? 0) > 0, "\(size): \(s)")
                #expect((s["waiting_text"] as? [String] ?? []).allSatisfy { !$0.isEmpty && Int($0) == nil }, "a reason, not a heart rate: \(s)")
                #expect((s["problems"] as? [String])?.isEmpty == true, "\(size): \(s["problems"] ?? "")")
            }
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")
        }
    }

    /// Runs the driver script to its end and returns its JSON answer.
    func browser(_ arguments: String) async throws -> [String: Any] {
        let (out, status) = await shell("\(Self.python) '\(Self.script)' \(arguments) 2>&1")
        #expect(status == 0, "wall_browser.py \(arguments): exit \(status)\n\(out.suffix(3000))")
        return try lastJSON(out)
    }
}

func httpStatus(_ url: String) async -> Int? {
    let (out, status) = await shell("\(WallBrowserTests.python) -c 'import urllib.request; print(urllib.request.urlopen(\"\(url)\", timeout=2).status)' 2>/dev/null")
    return status == 0 ? Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) : nil
}


