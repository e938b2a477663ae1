// SPDX-License-Identifier: MIT
import GATT
import HRV
import Normalization
import WearMetrics
import Timing

/// `blegate-bench decode`: ns per decode+normalize of a typical 0x2A37 notification, and
/// ns per HRV window update per beat. Build with `-c release`.
func runDecodeBenchmarks() {
    let clock = ContinuousClock()

    // A typical strap notification: uint8 HR 72 bpm, contact detected, 2 RR values.
    let notification: [UInt8] = [0x16, 0x48, 0x10, 0x03, 0x18, 0x03]
    let iterations = 2_000_000
    var checksum = 0.0
    let t0 = UTCTimestamp(millisecondsSince1970: 1_767_238_262_000)
    // Warm-up.
    for _ in 0..<10_000 {
        if let m = try? HeartRateMeasurement(bytes: notification) {
            checksum += WearMetricsNormalizer.record(heartRate: m, deviceID: "AA:BB:CC:DD:EE:FF", at: t0).rrIntervals?.first ?? 0
        }
    }
    let decodeElapsed = clock.measure {
        for i in 0..<iterations {
            let time = UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + Int64(i))
            if let m = try? HeartRateMeasurement(bytes: notification) {
                let r = WearMetricsNormalizer.record(heartRate: m, deviceID: "AA:BB:CC:DD:EE:FF", at: time)
                checksum += r[metric: "hr"] ?? 0
            }
        }
    }
    report("decode+normalize 0x2A37 (16 48 10 03 18 03)", decodeElapsed, iterations)

    let decodeOnly = clock.measure {
        for _ in 0..<iterations {
            if let m = try? HeartRateMeasurement(bytes: notification) { checksum += Double(m.heartRate) }
        }
    }
    report("decode only 0x2A37", decodeOnly, iterations)

    let record = WearMetricsNormalizer.record(heartRate: try! HeartRateMeasurement(bytes: notification), deviceID: "AA:BB:CC:DD:EE:FF", at: t0)
    let encodeIterations = 500_000
    let encodeElapsed = clock.measure {
        for _ in 0..<encodeIterations { checksum += Double(record.jsonString().utf8.count) }
    }
    report("record JSON encoding (not on the decode path)", encodeElapsed, encodeIterations)

    // HRV: one beat per update, emission (both windows computed) every 5 s as configured.
    let beats = 2_000_000
    var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 60, sdnnWindow: 300, emitEvery: 5))
    var t = 1_767_238_262.0
    var emitted = 0
    var rrs = [Double](repeating: 0, count: 1024)
    for i in 0..<rrs.count { rrs[i] = 780 + Double((i * 37) % 61) }
    let hrvElapsed = clock.measure {
        for i in 0..<beats {
            let rr = rrs[i & 1023]
            t += rr / 1000
            if let r = engine.ingest(deviceID: "strap", rrMilliseconds: CollectionOfOne(rr), receivedAt: t) {
                emitted += 1
                checksum += r.short.timeDomain?.rmssd ?? 0
            }
        }
    }
    report("HRV update per beat (60 s + 300 s windows, emit every 5 s: \(emitted) reports)", hrvElapsed, beats)

    // Worst case: a report computed on every beat.
    var everyBeat = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 60, sdnnWindow: 300, emitEvery: 0))
    let worstBeats = 200_000
    let worst = clock.measure {
        for i in 0..<worstBeats {
            let rr = rrs[i & 1023]
            t += rr / 1000
            if let r = everyBeat.ingest(deviceID: "strap", rrMilliseconds: CollectionOfOne(rr), receivedAt: t) {
                checksum += r.long.timeDomain?.sdnn ?? 0
            }
        }
    }
    report("HRV update per beat, emitting every beat (worst case)", worst, worstBeats)
    print("checksum \(checksum)")
}

private func report(_ name: String, _ elapsed: Duration, _ iterations: Int) {
    let ns = elapsed.seconds * 1e9 / Double(iterations)
    let rounded = (ns * 10).rounded() / 10
    print("\(name): \(rounded) ns/op over \(iterations) iterations")
}
