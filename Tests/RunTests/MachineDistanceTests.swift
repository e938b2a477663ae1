// SPDX-License-Identifier: MIT
import BackendContract
import BlegateTestSupport
import Cache
import Classes
@testable import BlegateRun
import Synchronization
import TestBackend
import Testing
import WearMetrics

/// A member's machines add their distance to the member's workout: the workout assembler
/// reading a real cache file, with devices paired in it or listed in `[members]`.
@Suite("Workouts: the distance of a member's machines")
struct MachineDistanceTests {
    static let strap = "A0:9E:1A:00:00:01"        // member-7's strap
    static let treadmill = "C4:7C:8D:00:00:01"    // paired to member-7, hand grips
    static let otherTreadmill = "C4:7C:8D:00:00:02"   // someone without a strap, hand grips
    static let rower = "C4:7C:8D:00:00:03"        // member-9's, whose strap is not here
    static let unpairedStrap = "A0:9E:1A:00:00:02"
    static let wheel = "C4:7C:8D:00:00:04"        // listed under the unpaired strap in [members]

    final class MemoryOutbox: WorkoutOutbox {
        let stored = Mutex<[String: String]>([:])
        func putWorkout(id: String, json: String) async throws { stored.withLock { $0[id] = json } }
    }

    static func record(_ device: String, _ ms: Int64, source: String, metrics: [(String, Double)], meta: [(String, String)] = []) -> WearMetrics {
        var m = KeyValueList<Double>()
        for (k, v) in metrics { m[k] = v }
        var e = KeyValueList<String>()
        for (k, v) in meta { e[k] = v }
        return WearMetrics(timestamp: UTCTimestamp(millisecondsSince1970: ms), deviceID: device, source: source, metrics: m, meta: e)
    }

    @Test("a machine paired to the strap's member, or listed under it, adds the distance it covered while the member was heard; its hand-grip heart rate makes no second workout")
    func machinesOfTheMember() async throws {
        let f = try RunFixture()
        let cache = try RecordCache(path: f.dir + "/cache.sqlite")
        let t0 = (UTCTimestamp.now.millisecondsSince1970 / 1000) * 1000 - 3_600_000
        func at(_ s: Int) -> Int64 { t0 + Int64(s) * 1000 }
        try await cache.pair(address: Self.strap, clientID: "member-7")
        try await cache.pair(address: Self.treadmill, clientID: "member-7")
        try await cache.pair(address: Self.rower, clientID: "member-9")

        var records: [WearMetrics] = []
        // member-7's strap, heard from 10 s to 250 s at 120 bpm.
        for s in 10...250 { records.append(Self.record(Self.strap, at(s), source: "ble_hrm", metrics: [("hr", 120)], meta: [("sensor_contact", "detected")])) }
        // Their treadmill, every 2 s the whole class at 3 m/s, restarting its count at
        // 150 s; its hand grips read 150 bpm. Heard from 10 s (1030 m) to 148 s (1444 m):
        // 414 m; then 2 m at 150 s and 300 m more by 250 s: 716 m.
        for s in stride(from: 0, through: 300, by: 2) {
            let distance = s < 150 ? 1000 + 3 * Double(s) : 2 + 3 * Double(s - 150)
            records.append(Self.record(Self.treadmill, at(s), source: "ble_ftms", metrics: [("distance_m", distance), ("hr", 150)],
                                       meta: [("hr_source", "machine")]))
        }
        // A treadmill whose runner wears no strap: its own workout, from its hand grips,
        // 60 s to 200 s at 2.5 m/s: 350 m.
        for s in stride(from: 60, through: 200, by: 2) {
            records.append(Self.record(Self.otherTreadmill, at(s), source: "ble_ftms", metrics: [("distance_m", 2.5 * Double(s)), ("hr", 140)],
                                       meta: [("hr_source", "machine")]))
        }
        // member-9's rower, no heart rate: nobody's workout.
        for s in stride(from: 0, through: 300, by: 2) {
            records.append(Self.record(Self.rower, at(s), source: "ble_ftms", metrics: [("distance_m", 4 * Double(s))]))
        }
        // An unpaired strap, 20 s to 220 s, with a wheel sensor listed under it: 2.1 m
        // wheel, 5 revolutions a second from 500 revolutions: 200 s × 10.5 m/s = 2100 m.
        for s in 20...220 {
            records.append(Self.record(Self.unpairedStrap, at(s), source: "ble_hrm", metrics: [("hr", 130)], meta: [("sensor_contact", "detected")]))
            records.append(Self.record(Self.wheel, at(s), source: "ble_csc", metrics: [("wheel_revs_total", 500 + 5 * Double(s - 20))],
                                       meta: [("wheel_circumference_m", "2.100")]))
        }
        cache.append(records)
        try await cache.flush()

        let outbox = MemoryOutbox()
        let assembler = WorkoutAssembler(gatewayID: "gw-test", cache: cache, outbox: outbox, members: [:],
                                         machines: [Self.unpairedStrap: [Self.wheel]], defaultMaxHR: 185,
                                         learnedMaxHR: { [:] }, make: WorkoutAssembler.compute)
        let session = ClassSession(key: "manual/\(t0)", name: "Run club", type: .run, origin: .manual, startMs: t0, endMs: at(300))
        let made = try await assembler.store(session, minDurationMs: 60_000, type: .run).filter(\.workout.kept)
        let byDevice = Dictionary(uniqueKeysWithValues: try made.map { ($0.device, try ContractValue.parse(Array($0.workout.json.utf8))) })
        #expect(Set(byDevice.keys) == [Self.strap, Self.otherTreadmill, Self.unpairedStrap], "\(byDevice.keys.sorted())")
        #expect(outbox.stored.withLock { $0.count } == 3)

        // Shorter than the minimum: computed for the class's summary, not stored.
        let short = MemoryOutbox()
        let brief = WorkoutAssembler(gatewayID: "gw-test", cache: cache, outbox: short, members: [:],
                                     machines: [Self.unpairedStrap: [Self.wheel]], defaultMaxHR: 185,
                                     learnedMaxHR: { [:] }, make: WorkoutAssembler.compute)
        let summaryOnly = try await brief.store(session, minDurationMs: 3_600_000, type: .run)
        #expect(Set(summaryOnly.map(\.device)) == Set(byDevice.keys) && summaryOnly.allSatisfy { !$0.workout.kept })
        #expect(short.stored.withLock { $0.isEmpty })

        let mine = try #require(byDevice[Self.strap])
        #expect(mine["distance_meters"]?.number == 716, "\(mine)")
        #expect(mine["max_heart_rate"]?.number == 120 && mine["avg_heart_rate"]?.number == 120, "the hand grips are not the member's heart rate")
        #expect(mine["duration_seconds"]?.number == 240 && mine["client_id"]?.string == "member-7")

        let other = try #require(byDevice[Self.otherTreadmill])
        #expect(other["distance_meters"]?.number == 350 && other["avg_heart_rate"]?.number == 140, "\(other)")

        let unpaired = try #require(byDevice[Self.unpairedStrap])
        #expect(unpaired["distance_meters"]?.number == 2100, "\(unpaired)")

        // The export's track carries the same machines.
        let machines = try await WorkoutProfiles.machineRecords(configuration: .init(), cache: cache, device: Self.strap, from: at(10), to: at(250))
        #expect(Set(machines.map(\.deviceID)) == [Self.treadmill])
        try await cache.close()
    }
}
