// SPDX-License-Identifier: MIT
import HRV
import Testing

/// A steady synthetic stream: 1 notification per second carrying the beats that ended
/// since the previous one, like a strap does.
struct StrapSimulator {
    var rr: [Double]
    var index = 0
    var beatTime: Double
    var clock: Double

    init(rr: [Double], start: Double = 1_767_225_600) {
        self.rr = rr
        self.beatTime = start
        self.clock = start
    }

    /// Advances one second; returns the RR values that completed in it.
    mutating func nextNotification() -> (rr: [Double], at: Double)? {
        guard index < rr.count else { return nil }
        clock += 1
        var out: [Double] = []
        while index < rr.count, beatTime + rr[index] / 1000 <= clock {
            beatTime += rr[index] / 1000
            out.append(rr[index])
            index += 1
        }
        return (out, clock)
    }
}

func steadySeries(count: Int, base: Double = 800, swing: Double = 20) -> [Double] {
    (0..<count).map { base + swing * ($0 % 4 < 2 ? 1 : -1) + Double($0 % 3) }
}

@Suite("Rolling HRV engine")
struct HRVEngineTests {
    @Test("emits every N seconds, with window lengths from the configuration")
    func schedule() {
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 30, sdnnWindow: 120, emitEvery: 10))
        var sim = StrapSimulator(rr: steadySeries(count: 400))
        var times: [Double] = []
        var last: HRVReport?
        while let n = sim.nextNotification() {
            if let r = engine.ingest(deviceID: "strap", rrMilliseconds: n.rr, receivedAt: n.at) {
                times.append(r.time)
                last = r
            }
        }
        #expect(times.count >= 30)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 10 })
        #expect(last?.short.windowSeconds == 30)
        #expect(last?.long.windowSeconds == 120)
        #expect(last?.method == "median20")
    }

    @Test("a streamed window equals the batch analysis of the same beats")
    func streamEqualsBatch() throws {
        let fx: ArtifactFixture = try Fixtures.load("artifact-mixed")
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 60, sdnnWindow: 300, emitEvery: 5))
        var sim = StrapSimulator(rr: fx.rr_ms)
        var lastTime = 0.0
        while let n = sim.nextNotification() {
            _ = engine.ingest(deviceID: "d", rrMilliseconds: n.rr, receivedAt: n.at)
            lastTime = n.at
        }
        let end = try #require(engine.lastBeatTime(deviceID: "d"))
        #expect(lastTime >= end)
        let r = try #require(engine.report(deviceID: "d", at: end))
        // The long window covers the whole series except beats more than 300 s old.
        let batch = HRVAnalysis.analyze(rrMilliseconds: fx.rr_ms, windowSeconds: 300)
        #expect(r.long.beatCount == batch.window.beatCount)
        #expect(close(r.long.timeDomain?.rmssd, batch.window.timeDomain!.rmssd!, 1e-9))
        #expect(close(r.long.timeDomain?.sdnn, batch.window.timeDomain!.sdnn!, 1e-9))
        #expect(r.long.artifactCount == batch.window.artifactCount)
    }

    @Test("disconnect clears the successive-difference chain")
    func disconnectBreaksChain() throws {
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 600, sdnnWindow: 600, emitEvery: 1000))
        let t0 = 1000.0
        _ = engine.ingest(deviceID: "d", rrMilliseconds: [800, 810, 800, 810, 800, 810, 800], receivedAt: t0)
        engine.disconnected(deviceID: "d")
        // After reconnecting the level is 100 ms higher; a difference across the gap would be ~100 ms.
        _ = engine.ingest(deviceID: "d", rrMilliseconds: [900, 910, 900, 910, 900, 910, 900], receivedAt: t0 + 60)
        let r = try #require(engine.report(deviceID: "d", at: t0 + 60))
        let td = try #require(r.long.timeDomain)
        #expect(td.nnCount == 14)
        #expect(td.differenceCount == 12)
        #expect(td.rmssd == 10)
        #expect(td.nn50 == 0)
    }

    @Test("a jump of receipt time against ΣRR (lost notifications) is detected as a gap")
    func driftGap() throws {
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 600, sdnnWindow: 600, emitEvery: 1000))
        var t = 100.0
        for _ in 0..<10 {
            t += 1.6
            _ = engine.ingest(deviceID: "d", rrMilliseconds: [800, 800], receivedAt: t)
        }
        // 5 s of notifications lost, then the stream continues at a different level.
        t += 5 + 1.6
        _ = engine.ingest(deviceID: "d", rrMilliseconds: [900, 900], receivedAt: t)
        let r = try #require(engine.report(deviceID: "d", at: t))
        let td = try #require(r.long.timeDomain)
        #expect(td.nnCount == 22)
        #expect(td.differenceCount == 20)
        #expect(td.rmssd == 0)
    }

    @Test("ordinary receipt jitter is not a gap")
    func jitterIsNotGap() throws {
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 600, sdnnWindow: 600, emitEvery: 1000))
        var t = 100.0
        var beat = 100.0
        for i in 0..<30 {
            beat += 1.6
            t = beat + (i % 3 == 0 ? 0.9 : 0.05)
            _ = engine.ingest(deviceID: "d", rrMilliseconds: [800, 800], receivedAt: t)
        }
        let td = try #require(engine.report(deviceID: "d", at: t)?.long.timeDomain)
        #expect(td.differenceCount == 59)
    }

    @Test("minimum-data rules: SDNN window not reliable before it is covered")
    func warmUp() throws {
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 60, sdnnWindow: 300, emitEvery: 5))
        var sim = StrapSimulator(rr: steadySeries(count: 500))
        var early: HRVReport?, late: HRVReport?
        while let n = sim.nextNotification() {
            if let r = engine.ingest(deviceID: "d", rrMilliseconds: n.rr, receivedAt: n.at) {
                if early == nil, n.at - 1_767_225_600 >= 120 { early = r }
                late = r
            }
        }
        #expect(early?.short.meetsMinimumData == true)
        #expect(early?.long.meetsMinimumData == false)
        #expect(late?.long.meetsMinimumData == true)
        #expect((late?.long.coverage ?? 0) > 0.9)
    }

    @Test("artifact share above the limit makes the window unreliable, numbers still there")
    func artifactLimit() throws {
        var rr = steadySeries(count: 100)
        for i in stride(from: 10, to: 100, by: 10) { rr[i] = 1700 }   // ~9 % long beats
        let r = HRVAnalysis.analyze(rrMilliseconds: rr)
        #expect(r.window.artifactCount == 9)
        #expect(!r.window.meetsMinimumData)
        #expect(r.window.timeDomain?.rmssd != nil)
    }

    @Test("range filter drops RR outside 300-2000 ms (e.g. 1 tick and 65535 ticks)")
    func rangeFilter() {
        var rr = steadySeries(count: 40)
        rr[20] = 0.9765625
        rr[30] = 63999.0234375
        let r = HRVAnalysis.analyze(rrMilliseconds: rr)
        #expect(r.classes[20] == .outOfRange)
        #expect(r.classes[30] == .outOfRange)
        #expect(r.window.artifactCount == 2)
    }

    @Test("exercise context is carried into the report; tick emits and forgets silent devices")
    func contextAndTick() throws {
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 60, sdnnWindow: 120, emitEvery: 5))
        _ = engine.ingest(deviceID: "b", rrMilliseconds: [800, 805, 800], receivedAt: 10)
        _ = engine.ingest(deviceID: "a", rrMilliseconds: [700, 705, 700], receivedAt: 10)
        engine.setContext(.exercise, deviceID: "a")
        let due = engine.tick(now: 15)
        #expect(due.map(\.deviceID) == ["a", "b"])
        #expect(due.first?.context == .exercise)
        #expect(due.last?.context == .unknown)
        #expect(engine.tick(now: 16).isEmpty)
        #expect(engine.tick(now: 200).isEmpty)
        #expect(engine.deviceIDs.isEmpty)
    }
}
