// SPDX-License-Identifier: MIT
import BackendContract
import BlegateTestSupport
import Cache
import Classes
@testable import BlegateRun
import Logging
import Sync
import Synchronization
import TestBackend
import Testing
import Timing
import WearMetrics

/// The gateway's own path from an ended class to the backend, in process: the class keeper
/// on a test clock, the workout assembler reading a real cache file, the sync engine and
/// the loopback backend.
@Suite("Class workouts corrected by late records")
struct WorkoutCorrectionTests {
    static let strapA = "A0:9E:1A:00:00:01"
    static let strapB = "A0:9E:1A:00:00:02"

    /// A heart rate as the normalizer makes it.
    static func beat(_ device: String, _ ms: Int64, _ hr: Double) -> WearMetrics {
        var metrics = KeyValueList<Double>()
        metrics["hr"] = hr
        var meta = KeyValueList<String>()
        meta["sensor_contact"] = "detected"
        return WearMetrics(timestamp: UTCTimestamp(millisecondsSince1970: ms), deviceID: device, source: "ble_hrm", metrics: metrics, meta: meta)
    }

    /// A wall clock the test moves.
    final class TestWallClock: Sendable {
        private let value: Mutex<Int64>
        init(_ ms: Int64) { value = Mutex(ms) }
        var ms: Int64 { value.withLock { $0 } }
        func set(_ ms: Int64) { value.withLock { $0 = ms } }
    }

    /// The cache's copy of a workout, parsed.
    static func stored(_ cache: RecordCache, _ id: String) async throws -> (revision: Int, json: ContractValue)? {
        guard let d = try await cache.document(kind: .workout, id: id) else { return nil }
        return (d.revision, try ContractValue.parse(Array(d.json.utf8)))
    }

    @Test("records that reach the cache after a class's workouts went out make a revision with the same id, sent by PUT; the backend ends with the corrected workout")
    func lateRecordsCorrect() async throws {
        let f = try RunFixture()
        // Commits only when asked (flush) or at 1000 records: the class ends while its last
        // records still wait for their commit.
        let cache = try RecordCache(path: f.dir + "/cache.sqlite", options: CacheOptions(groupCommitInterval: .seconds(3600)))
        let t0 = (UTCTimestamp.now.millisecondsSince1970 / 1000) * 1000 - 3_600_000
        let clock = TestWallClock(t0)
        let assembler = WorkoutAssembler(gatewayID: "gw-test", cache: cache, outbox: cache, members: [:], defaultMaxHR: 185,
                                         learnedMaxHR: { [:] }, make: WorkoutAssembler.compute)
        var logger = Logger(label: "test.classes")
        logger.logLevel = .critical
        let keeper = ClassKeeper(settings: .init(gatewayID: "gw-test", schedule: [], idleCloseMs: 600_000, minDurationMs: 60_000,
                                                 openGymType: .other, now: { clock.ms }),
                                 cache: cache, workouts: assembler, logger: logger)
        let session = try await keeper.start(name: "Spin 07:00", type: .cycle)
        #expect(session.startMs == t0)

        // Five minutes: strap B at 130 bpm throughout; strap A at 120, but its minute from
        // 120 s to 180 s (at 160 bpm) reaches the cache only after the class.
        let late = (120..<180).map { Self.beat(Self.strapA, t0 + Int64($0) * 1000, 160) }
        for s in 0..<300 {
            if !(120..<180).contains(s) { cache.append(Self.beat(Self.strapA, t0 + Int64(s) * 1000, 120)) }
            cache.append(Self.beat(Self.strapB, t0 + Int64(s) * 1000, 130))
        }
        clock.set(t0 + 300_000)
        let ended = try await keeper.stop()
        #expect(ended.endMs == t0 + 300_000)

        // The first versions, stored when the class stopped, took every record received
        // before the stop, committed or not.
        let idA = assembler.workoutID(session: ended, device: Self.strapA), idB = assembler.workoutID(session: ended, device: Self.strapB)
        let firstA = try #require(try await Self.stored(cache, idA)), firstB = try #require(try await Self.stored(cache, idB))
        #expect(firstA.revision == 1 && firstB.revision == 1)
        #expect(firstA.json["duration_seconds"]?.number == 299 && firstA.json["avg_heart_rate"]?.number == 120)
        #expect(firstA.json["max_heart_rate"]?.number == 120 && firstA.json["coverage"]?.number == 0.799, "\(firstA.json)")
        #expect(firstB.json["duration_seconds"]?.number == 299 && firstB.json["avg_heart_rate"]?.number == 130)

        let backend = try TestBackend(.init(token: RunFixture.token))
        try await backend.start()
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: RunFixture.token),
                                       requestTimeout: .seconds(10), connectTimeout: .seconds(2))
        let engine = SyncEngine(outbox: cache, documents: cache, client: client,
                                configuration: SyncConfiguration(gatewayID: "gw-test", batchSize: 500, interval: .milliseconds(200),
                                                                 backoff: Backoff(base: .milliseconds(50), cap: .milliseconds(300))))
        let run = Task { try await engine.run() }
        func allDelivered() async -> Bool {
            await eventually(timeout: 30, every: .milliseconds(20)) {
                (try? await cache.documentCounts().values.allSatisfy { $0.pending == 0 }) ?? false
            }
        }
        #expect(await backend.wait(timeout: .seconds(30)) { $0.workouts.count == 2 })
        #expect(await allDelivered())

        // A's missing minute arrives (a strap's buffer flushed after the class ended).
        cache.append(late)
        try await cache.flush()
        // Corrections run once a minute: 30 s after the first computation, nothing yet.
        clock.set(t0 + 330_000)
        await keeper.tick()
        #expect(try await Self.stored(cache, idA)?.revision == 1)
        clock.set(t0 + 361_000)
        await keeper.tick()
        let correctedA = try #require(try await Self.stored(cache, idA))
        #expect(correctedA.revision == 2)
        #expect(try await Self.stored(cache, idB)?.revision == 1, "B's workout did not change")
        // 240 heart rates at 120 and 60 at 160: 128 on average, 160 at most, every second covered.
        #expect(correctedA.json["avg_heart_rate"]?.number == 128 && correctedA.json["max_heart_rate"]?.number == 160)
        #expect(correctedA.json["coverage"]?.number == 1 && correctedA.json["duration_seconds"]?.number == 299)
        #expect(correctedA.json["id"]?.string == idA)

        await engine.wake()
        #expect(await backend.wait(timeout: .seconds(30)) { s in s.workouts.first { $0.id == idA }?.replacements == 1 })
        #expect(await allDelivered())
        let atBackend = Dictionary(uniqueKeysWithValues: backend.store.workouts.map { ($0.id, $0) })
        #expect(atBackend.count == 2, "still one workout per strap")
        #expect(atBackend[idA]?.json == correctedA.json, "the backend holds the corrected workout")
        #expect(atBackend[idB]?.replacements == 0)
        let puts = backend.store.requests.filter { $0.method == "PUT" && $0.path == "/api/v1/workouts" }
        #expect(puts.map(\.status) == [200] && puts.first?.items == 1, "\(puts)")
        #expect(backend.store.requests.filter { $0.method == "POST" && $0.path == "/api/v1/workouts" }.compactMap(\.items) == [2])

        // Past the correction window (10 min after the end), late records change nothing.
        clock.set(t0 + 300_000 + 600_000)
        await keeper.tick()
        cache.append((300..<310).map { Self.beat(Self.strapA, t0 + Int64($0) * 1000 - 10_000, 200) })
        try await cache.flush()
        clock.set(t0 + 300_000 + 720_000)
        await keeper.tick()
        #expect(try await Self.stored(cache, idA)?.revision == 2)

        await engine.stop()
        _ = try? await run.value
        try? await client.shutdown()
        await backend.stop()
        try? await cache.close()
    }
}
