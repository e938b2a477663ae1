// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
import Simulator
import Testing
import TestBackend
#if canImport(Glibc)
import Glibc
#endif

/// A class on the wall in headless Chromium: started and stopped with `blegate class`,
/// its name and running timer in the header, then each member's card in the summary:
/// points, time per zone, a curve. Set BLEGATE_WALL_SHOTS=DIR to keep the screenshot of
/// the header (docs/ holds that of a 4-minute class: BLEGATE_WALL_CLASS_SECONDS=240).
@Suite("A class on the wall in headless Chromium", .serialized)
struct WallClassBrowserTests {
    static let straps = 4

    @Test("name and timer in the header while the class runs; the summary when it ends", .timeLimit(.minutes(10)))
    func classOnTheWall() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "no /usr/bin/chromedriver: run scripts/setup.sh")
        let backend = try TestBackend(.init(token: "wall-class-token"))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulatorOnPrivateBus({ c in
            c.straps = Self.straps
            c.seed = 9
            c.rate = 1
        }) { bus, sim in
            let dir = try scratchDirectory()
            let port = try freeLoopbackPort()
            let url = "http://127.0.0.1:\(port)/"
            let config = dir + "/blegate.toml"
            try "wall-class-token\n".write(toFile: dir + "/token", atomically: true, encoding: .utf8)
            chmod(dir + "/token", 0o600)
            try """
                [gateway]
                id = "wall-class"
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
                gym_name = "Class Test Gym"
                [workouts]
                min_duration = "5s"

                """.write(toFile: config, atomically: true, encoding: .utf8)
            let blegate = "'\(BlegateBinary.path)'"
            let run = try await BackgroundProcess.start("\(blegate) run --config '\(config)' --bus '\(bus.address)'")
            #expect(await run.waitForStdout("] connected ", count: Self.straps, timeout: 120), "\(run.stdout)")
            let shots = ProcessInfo.processInfo.environment["BLEGATE_WALL_SHOTS"] ?? dir
            let watcher = try await BackgroundProcess.start(
                "\(WallBrowserTests.python) '\(WallBrowserTests.script)' classes '\(url)' --tiles \(Self.straps) --shots '\(shots)'")
            #expect(await watcher.waitForStdout("# READY", timeout: 150), "\(watcher.stdout)\n\(watcher.stderr)")
            let start = await shell("\(blegate) class start --name 'Spin 07:00' --type cycle --config '\(config)' 2>&1")
            #expect(start.status == 0, "\(start.out)")
            #expect(await watcher.waitForStdout("# CLASS", timeout: 120), "\(watcher.stdout)\n\(watcher.stderr)")
            // BLEGATE_WALL_CLASS_SECONDS makes a longer class (the docs' screenshots).
            let length = Int(ProcessInfo.processInfo.environment["BLEGATE_WALL_CLASS_SECONDS"] ?? "") ?? 10
            try await Task.sleep(for: .seconds(length))
            let stop = await shell("\(blegate) class stop --config '\(config)' 2>&1")
            #expect(stop.status == 0, "\(stop.out)")
            #expect(await watcher.wait(timeout: 180) == 0, "\(watcher.stderr)")
            let result = try lastJSON(watcher.stdout)

            let shown = try #require(result["class"] as? [String: Any])
            let later = try #require(result["class_later"] as? [String: Any])
            #expect(shown["name"] as? String == "Spin 07:00")
            let t0 = Self.seconds(shown["timer"] as? String), t1 = Self.seconds(later["timer"] as? String)
            #expect(t0 != nil && t1 != nil && t1! > t0!, "the timer runs: \(shown["timer"] ?? "") then \(later["timer"] ?? "")")
            let summary = try #require(result["summary"] as? [String: Any], "no summary: \(watcher.stdout.suffix(2000))")
            #expect((summary["title"] as? String)?.contains("Spin 07:00") == true)
            #expect(summary["name"] as? String == "", "the header's class is gone once it ended")
            let rows = try #require(summary["rows"] as? [[String: Any]])
            #expect(Set(rows.compactMap { $0["id"] as? String }) == Set(sim.devices.map(\.address)), "a row per member heard")
            // Each row says what the backend's workout of the class says (the straps were
            // heard before the class too: their open-gym workouts are not the class's).
            func ofClass(_ w: [BackendDocument]) -> [BackendDocument] { w.filter { $0.json["class_name"]?.string == "Spin 07:00" } }
            #expect(await backend.wait(timeout: .seconds(60)) { ofClass($0.workouts).count == Self.straps },
                    "\(backend.store.workouts.map { ($0.json["device_id"]?.string ?? "", $0.json["class_name"]?.string ?? "open gym") })")
            for row in rows {
                let w = try #require(ofClass(backend.store.workouts).first { $0.json["device_id"]?.string == row["id"] as? String })
                #expect(Int(row["points"] as? String ?? "") == Int((w.json["effort_points"]?.number ?? -1).rounded()))
                let zones = (w.json["seconds_in_zone"]?.array ?? []).compactMap(\.number).dropFirst().map { String(Int($0)) }
                #expect((row["zones"] as? [String]) == Array(zones), "\(row) vs \(zones)")
                #expect(row["svg"] as? Bool == true, "a curve: \(row)")
            }
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stderr)")
        }
    }

    /// "1:05" or "1:05 / 45:00" → 65.
    static func seconds(_ timer: String?) -> Int? {
        guard let first = timer?.split(separator: " ").first else { return nil }
        let parts = first.split(separator: ":").compactMap { Int($0) }
        guard parts.count >= 2 else { return nil }
        return parts.reduce(0) { $0 * 60 + $1 }
    }
}
