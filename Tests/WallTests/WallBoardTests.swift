// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Effort
import Foundation
import Synchronization
import Testing
import Wall
import WearMetrics

func hrRecord(_ id: String, _ hr: Double, advertised: Bool = false, battery: String? = nil) -> WearMetrics {
    var meta = KeyValueList<String>()
    if advertised { meta["hr_source"] = "advertisement" }
    if let battery { meta["battery"] = battery }
    return WearMetrics(timestamp: .now, deviceID: id, source: "ble_hrm", metrics: KeyValueList([("hr", hr)]), meta: meta)
}

func tiles(_ frame: String?) throws -> [[String: Any]] {
    let data = try #require(frame).data(using: .utf8)!
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    return try #require(object["tiles"] as? [[String: Any]])
}

@Suite("The wall's board: tile states, places, names and maths, without a browser")
struct WallBoardTests {
    static let a = "A0:9E:1A:00:00:0A", b = "A0:9E:1A:00:00:0B", c = "A0:9E:1A:00:AB:CD"

    @Test("live, advertised, stale after 5 s, gone after 60 s, removed after 70 s")
    func states() throws {
        let clock = ManualClock()
        let board = WallBoard(settings: WallSettings(host: "127.0.0.1", port: 0, gymName: "Gym"), clock: clock.seconds)
        board.ingest(hrRecord(Self.a, 120), isDeviceRecord: false)
        board.ingest(hrRecord(Self.b, 130, advertised: true), isDeviceRecord: false)
        var t = try tiles(board.frame())
        #expect(t.map { $0["state"] as? String } == ["live", "advertised"])
        clock.advance(by: .seconds(5.5))
        board.ingest(hrRecord(Self.b, 131, advertised: true), isDeviceRecord: false)
        t = try tiles(board.frame())
        #expect(t.map { $0["state"] as? String } == ["stale", "advertised"])
        #expect(t[0]["hr"] as? Int == 120)
        clock.advance(by: .seconds(55))
        t = try tiles(board.frame())
        #expect(t.map { $0["state"] as? String } == ["gone", "stale"])
        clock.advance(by: .seconds(10))
        t = try tiles(board.frame())
        #expect(t.map { $0["id"] as? String } == [Self.b])
    }

    @Test("Tiles keep their places; a freed place goes to the next new strap")
    func places() throws {
        let clock = ManualClock()
        let board = WallBoard(settings: WallSettings(host: "127.0.0.1", port: 0, gymName: "Gym"), clock: clock.seconds)
        board.ingest(hrRecord(Self.a, 100), isDeviceRecord: false)
        board.ingest(hrRecord(Self.b, 100), isDeviceRecord: false)
        // The service builds a frame every tick; that is when expired tiles go.
        clock.advance(by: .seconds(40))
        _ = board.frame()
        board.ingest(hrRecord(Self.b, 170), isDeviceRecord: false)
        clock.advance(by: .seconds(40))
        _ = board.frame()
        board.ingest(hrRecord(Self.b, 90), isDeviceRecord: false)
        board.ingest(hrRecord(Self.c, 100), isDeviceRecord: false)
        let t = try tiles(board.frame())
        #expect(t.map { $0["id"] as? String } == [Self.c, Self.b])
        #expect(t.map { $0["slot"] as? Int } == [0, 1])
    }

    @Test("Names: configured member, paired strap's name, else New with the short id; no client id in the frame")
    func names() throws {
        let clock = ManualClock()
        let profile = WallMember(name: "Ana", profile: MemberProfile(age: 30, weightKg: 60, sex: .female))
        let board = WallBoard(settings: WallSettings(host: "127.0.0.1", port: 0, gymName: "North \"Gym\"",
                                                     members: ["client-77": profile]), clock: clock.seconds)
        board.updateDirectory([WallDirectoryEntry(address: Self.a, name: "Polar H10 1", clientID: "client-77"),
                               WallDirectoryEntry(address: Self.b, name: "Polar H10 2", clientID: "client-88")])
        for _ in 0..<2 {
            for id in [Self.a, Self.b, Self.c] { board.ingest(hrRecord(id, 150), isDeviceRecord: false) }
            clock.advance(by: .seconds(1))
        }
        let frame = try #require(board.frame())
        #expect(!frame.contains("client-"))
        let t = try tiles(frame)
        #expect(t.map { $0["name"] as? String } == ["Ana", "Polar H10 2", "New"])
        #expect(t[2]["short"] as? String == "ABCD")
        #expect(t[0]["short"] == nil)
        // Ana: 30 y → Tanaka 187, 150 bpm = 80 % → zone 4; kcal only for her (weight, age, sex known).
        #expect(t[0]["zone"] as? Int == 4)
        #expect(t[0]["est"] as? Bool == true)
        #expect(t[0]["kcal"] != nil)
        #expect(t[1]["kcal"] == nil)
    }

    @Test("Low battery from device records; a maximum held for 30 s is learned and reported")
    func batteryAndLearning() throws {
        let clock = ManualClock()
        let learned = Mutex<[String: Int]>([:])
        let board = WallBoard(settings: WallSettings(host: "127.0.0.1", port: 0, gymName: "Gym",
                                                     members: [Self.a: WallMember(name: "Bo", profile: MemberProfile(maxHR: 170))]),
                              clock: clock.seconds, onLearned: { l in learned.withLock { $0 = l } })
        board.ingest(WearMetrics(timestamp: .now, deviceID: Self.a, source: "ble_device", meta: KeyValueList([("battery", "0.10")])),
                     isDeviceRecord: true)
        for _ in 0...31 {
            board.ingest(hrRecord(Self.a, 175), isDeviceRecord: false)
            clock.advance(by: .seconds(1))
        }
        let t = try tiles(board.frame())
        #expect(t[0]["low"] as? Bool == true)
        #expect(learned.withLock { $0 } == [Self.a: 175])
        #expect(t[0]["pct"] as? Int == 100)
        #expect(t[0]["est"] as? Bool == false)
    }

    @Test("No frame when nothing changed, until the keep-alive is due")
    func keepAlive() throws {
        let clock = ManualClock()
        let board = WallBoard(settings: WallSettings(host: "127.0.0.1", port: 0, gymName: "Gym"), clock: clock.seconds)
        #expect(board.frame() != nil)
        #expect(board.frame() == nil)
        clock.advance(by: .seconds(2.1))
        #expect(board.frame() != nil)
    }
}
