// SPDX-License-Identifier: MIT
import BlegateTestSupport
import ClassSummary
import Effort
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import Wall

/// The summary of a 40-member class on the TV sizes, in headless Chromium: every card on
/// every page inside the screen with nothing cut off, each with its curve. The board is
/// fed directly (a 45-minute class of 40 members from the simulator would take 45
/// minutes). BLEGATE_WALL_SHOTS=docs keeps `wall-summary-1920x1080.png` and `-1280x720.png`.
@Suite("A 40-member summary fits the TV sizes", .serialized)
struct WallSummaryBrowserTests {
    static let names = ["Ana", "Ben", "Chloé", "Dmitri", "Elif", "Farah", "Gustavo", "Hana", "Ines", "Jonas", "Kofi", "Lena", "Mateo",
                        "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sami", "Tove", "Umar", "Vera", "Wojciech", "Xin", "Yusuf",
                        "Zoë", "Amara", "Björn", "Carmen", "Dev", "Emeka", "Fiona", "Gabriel", "Helga", "Ivan", "Jasmine",
                        "Kenji", "Laila", "Maximilian Oberhauser", "Noor"]

    @Test("every card of every page fits 1920×1080 and 1280×720", .timeLimit(.minutes(5)))
    func fits() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "no /usr/bin/chromedriver: run scripts/setup.sh")
        var members: [String: WallMember] = [:]
        var rows: [WallSummaryRow] = []
        let length = 45 * 60
        for (i, name) in Self.names.enumerated() {
            let address = String(format: "A0:9E:1A:00:10:%02X", i)
            members[address] = WallMember(name: name, profile: MemberProfile(age: 25 + i, weightKg: 60 + Double(i), sex: i % 2 == 0 ? .female : .male))
            // A warm-up, two intervals and a cool-down, a little different for each member.
            let samples = stride(from: 0, to: length, by: 1).map { s -> HeartRateCurve.Sample in
                let phase = Double(s) / Double(length)
                let effort = phase < 0.15 ? phase / 0.15 * 0.6 : phase > 0.85 ? 0.6 * (1 - phase) / 0.15 : (sin(phase * 18 + Double(i)) + 1) / 2 * 0.4 + 0.6
                return HeartRateCurve.Sample(second: Double(s), bpm: 85 + effort * Double(90 + i % 10))
            }
            rows.append(WallSummaryRow(device: address, points: Double(120 - i * 2), kcal: 300 + Double(i * 7),
                                       secondsInZone: [60, 300 + i, 600, 900 - i, 600, 240 + i * 3], samples: samples))
        }
        let settings = WallSettings(host: "127.0.0.1", port: 0, gymName: "Spin studio", members: members)
        let board = WallBoard(settings: settings)
        board.classEnded(name: "Spin 18:00", rows: rows, durationSeconds: Double(length))
        let port = Mutex<Int?>(nil)
        let service = WallService(board: board, settings: settings, logger: Logger(label: "wall-test"),
                                  onListening: { p in port.withLock { $0 = p } })
        let group = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [], logger: Logger(label: "wall-test")))
        let running = Task { try await group.run() }
        defer { running.cancel() }
        #expect(await eventually(timeout: 10) { port.withLock { $0 } != nil })
        let p = try #require(port.withLock { $0 })
        let shots = try ProcessInfo.processInfo.environment["BLEGATE_WALL_SHOTS"] ?? scratchDirectory()
        let run = await shell("\(WallBrowserTests.python) '\(WallBrowserTests.script)' summary 'http://127.0.0.1:\(p)/' --tiles 40 --shots '\(shots)' 2>&1")
        #expect(run.status == 0, "\(run.out)")
        let result = try lastJSON(run.out)
        let sizes = try #require(result["sizes"] as? [[String: Any]])
        #expect(sizes.count == 2)
        for s in sizes {
            #expect(s["reached"] as? Bool == true)
            #expect(s["cards"] as? Int == 40, "every member on some page at \(s["size"] ?? "")")
            #expect((s["problems"] as? [String])?.isEmpty == true, "\(s)")
            #expect((s["min_font_px"] as? Double ?? 0) >= 12, "readable across a room: \(s)")
        }
        await group.triggerGracefulShutdown()
        try await running.value
    }
}
