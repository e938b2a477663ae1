// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Effort
import Foundation
import Synchronization
import Testing
import Wall
import WearMetrics

/// The class in the header, its summary when it ends, and scale weights in kcal.
@Suite("The wall's class header and summary")
struct WallClassTests {
    static let a = "A0:9E:1A:00:00:0A", b = "A0:9E:1A:00:00:0B"

    static func object(_ frame: String?) throws -> [String: Any] {
        let data = try #require(frame).data(using: .utf8)!
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("name and timer while a class runs; points count from its start; the summary stays 60 s")
    func header() throws {
        let clock = ManualClock()
        let wall = Mutex<Int64>(1_800_000_000_000)
        let board = WallBoard(settings: WallSettings(host: "127.0.0.1", port: 0, gymName: "Gym"), clock: clock.seconds,
                              wallMillis: { wall.withLock { $0 } })
        // Ten minutes in zone 4 before the class: points the class must not count.
        for _ in 0..<600 {
            board.ingest(hrRecord(Self.a, 150), isDeviceRecord: false)
            clock.advance(by: .seconds(1))
        }
        #expect(try tiles(board.frame()).first?["pts"] as? Int == 39, "599 s at 4 points a minute")
        board.classStarted(name: "Spin 07:00", startMillis: 1_800_000_000_000 - 90_000, plannedSeconds: 2700)
        var o = try Self.object(board.frame())
        let c = try #require(o["class"] as? [String: Any])
        #expect(c["name"] as? String == "Spin 07:00" && c["elapsed"] as? Int == 90 && c["length"] as? Int == 2700)
        #expect((o["tiles"] as? [[String: Any]])?.first?["pts"] as? Int == 0)

        board.classEnded(name: "Spin 07:00", rows: [
            WallSummaryRow(device: Self.b, points: 12.4, secondsInZone: [0, 60, 120, 600, 0, 0]),
            WallSummaryRow(device: Self.a, points: 40.6, secondsInZone: [0, 0, 0, 0, 600, 30]),
        ])
        o = try Self.object(board.frame())
        #expect(o["class"] == nil)
        let summary = try #require(o["summary"] as? [String: Any])
        let rows = try #require(summary["rows"] as? [[String: Any]])
        #expect(rows.map { $0["pts"] as? Int } == [41, 12], "most points first")
        #expect(rows[0]["min"] as? [Int] == [0, 0, 0, 0, 10, 1])
        clock.advance(by: .seconds(59))
        #expect(try Self.object(board.frame(keepAlive: 0))["summary"] != nil)
        clock.advance(by: .seconds(2))
        #expect(try Self.object(board.frame(keepAlive: 0))["summary"] == nil)
    }

    @Test("a weight from the member's scale gives kcal where the configuration had none")
    func scaleWeight() throws {
        let clock = ManualClock()
        let settings = WallSettings(host: "127.0.0.1", port: 0, gymName: "Gym",
                                    members: ["client-7": WallMember(name: "Bo", profile: MemberProfile(age: 40, sex: .male))])
        let board = WallBoard(settings: settings, clock: clock.seconds)
        board.updateDirectory([WallDirectoryEntry(address: Self.a, name: "H10", clientID: "client-7")])
        for _ in 0..<3 {
            board.ingest(hrRecord(Self.a, 140), isDeviceRecord: false)
            clock.advance(by: .seconds(1))
        }
        #expect(try tiles(board.frame()).first?["kcal"] == nil)
        board.setWeights(["client-7": 82.5])
        for _ in 0..<3 {
            board.ingest(hrRecord(Self.a, 140), isDeviceRecord: false)
            clock.advance(by: .seconds(1))
        }
        #expect(try tiles(board.frame()).first?["kcal"] != nil)
    }
}
