// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Effort
import Foundation
import Synchronization
import ClassSummary
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

    @Test("name and timer while a class runs; points count from its start; the summary with curves stays 120 s")
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

        let curve = (0..<630).map { HeartRateCurve.Sample(second: Double($0), bpm: $0 < 600 ? 165 : 185) }
        board.classEnded(name: "Spin 07:00", rows: [
            WallSummaryRow(device: Self.b, points: 12.4, secondsInZone: [0, 60, 120, 600, 0, 0]),
            WallSummaryRow(device: Self.a, points: 40.6, kcal: 212.4, secondsInZone: [0, 0, 0, 0, 600, 30], samples: curve),
        ], durationSeconds: 630)
        o = try Self.object(board.frame())
        #expect(o["class"] == nil)
        let summary = try #require(o["summary"] as? [String: Any])
        #expect(summary["count"] as? Int == 2 && summary["name"] as? String == "Spin 07:00")
        let html = try #require(board.summaryHTML())
        let cards = html.split(separator: "data-testid=\"summary-member\"").dropFirst()
        #expect(cards.count == 2)
        #expect(cards.first!.contains("data-strap=\"\(Self.a)\""), "most points first")
        #expect(cards.first!.contains("<svg") && cards.first!.contains("<polyline"))
        #expect(cards.first!.contains("<i>Z4</i>10:00<") && cards.first!.contains("<i>Z5</i>0:30<"), "minutes and seconds")
        #expect(cards.first!.contains("data-field=\"kcal\">212<"))
        #expect(!cards.last!.contains("data-field=\"kcal\""), "no kcal without the profile for it")
        clock.advance(by: .seconds(119))
        #expect(try Self.object(board.frame(keepAlive: 0))["summary"] != nil)
        clock.advance(by: .seconds(2))
        #expect(try Self.object(board.frame(keepAlive: 0))["summary"] == nil)
        #expect(board.summaryHTML() == nil)
        #expect(board.lastSummary()?.members.count == 2, "the coach page keeps it")
    }

    @Test("straps waiting for a link get tiles, then a count past the screen's room")
    func waiting() throws {
        let clock = ManualClock()
        let board = WallBoard(settings: WallSettings(host: "127.0.0.1", port: 0, gymName: "Spin studio"), clock: clock.seconds)
        board.ingest(hrRecord(Self.a, 120), isDeviceRecord: false)
        var waiting = (0..<(WallBoard.capacity + 5)).map { i in
            WallWaitingStrap(address: String(format: "C4:A4:00:00:%02X:%02X", i / 256, i % 256), reason: "hci0 full (4 of 4)")
        }
        waiting.append(WallWaitingStrap(address: Self.a, reason: "waiting for a link"))
        board.updateWaiting(waiting)
        let o = try Self.object(board.frame())
        let shown = try #require(o["tiles"] as? [[String: Any]])
        #expect(shown.count == WallBoard.capacity)
        #expect(shown.first?["id"] as? String == Self.a && shown.first?["state"] as? String == "live", "a heard strap keeps its tile")
        let w = shown.filter { $0["state"] as? String == "waiting" }
        #expect(w.count == WallBoard.capacity - 1)
        #expect(w.allSatisfy { $0["why"] as? String == "hci0 full (4 of 4)" })
        #expect(o["waitingHidden"] as? Int == 6)
        #expect(o["gym"] as? String == "Spin studio")
        board.updateWaiting([])
        #expect(try tiles(board.frame()).count == 1)
    }

    @Test("names and zones from the server's members, ahead of the configuration")
    func serverMembers() throws {
        let clock = ManualClock()
        let settings = WallSettings(host: "127.0.0.1", port: 0, gymName: "Gym",
                                    members: ["m-1": WallMember(name: "Configured", profile: MemberProfile(maxHR: 200))])
        let board = WallBoard(settings: settings, clock: clock.seconds)
        board.setServerMembers(["m-1": WallMember(name: "Ana", profile: MemberProfile(maxHR: 150))], straps: [Self.a.lowercased(): "m-1"])
        board.ingest(hrRecord(Self.a, 140), isDeviceRecord: false)
        let tile = try #require(try tiles(board.frame()).first)
        #expect(tile["name"] as? String == "Ana")
        #expect(tile["zone"] as? Int == 5, "140 of the server's 150 is zone 5; of the configuration's 200 it would be 3")
        #expect(tile["short"] == nil, "an assigned strap is not new")
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
