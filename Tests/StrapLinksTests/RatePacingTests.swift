// SPDX-License-Identifier: MIT
@testable import StrapLinks
import HRV
import Synchronization
import Testing
import WearMetrics

/// The "faster than a heart beats" limit judges a strap by when its values arrived, not by
/// when the gateway got round to them.
@Suite("Notification rate limit paced by arrival")
struct RatePacingTests {
    final class Counting: RecordSink {
        let heartRates = Mutex(0)
        func receive(_ record: WearMetrics, kind: RecordKind) {
            if kind == .heartRate { heartRates.withLock { $0 += 1 } }
        }
    }

    static let payload: [UInt8] = [0x00, 72]

    func feed(_ pipeline: RecordPipeline, _ device: String, count: Int, from start: Int64, every ms: Int64) {
        for i in 0..<Int64(count) {
            Self.payload.withUnsafeBytes { bytes in
                pipeline.heartRate(deviceID: device, bytes: bytes, arrival: UTCTimestamp(millisecondsSince1970: start + i * ms))
            }
        }
    }

    @Test("a minute of 1 Hz values handed over at once (a held-up reader) is all admitted; 100 Hz is cut to the burst and 5 a second")
    func backlogIsNotAFlood() {
        let sink = Counting()
        let pipeline = RecordPipeline(sink: sink, hrv: HRVEngineConfiguration())
        let start: Int64 = 1_800_000_000_000
        // Handed over in one go, far faster than 5 a second of call time, but they
        // arrived a second apart.
        feed(pipeline, "backlog", count: 60, from: start, every: 1000)
        #expect(pipeline.counters(deviceID: "backlog").tooFast == 0)
        #expect(pipeline.counters(deviceID: "backlog").heartRate == 60)

        // A device that really sent 100 a second: the burst (120) and the refill over the
        // 2.99 s it took (5 a second: 14 more tokens) get through, the rest are counted.
        feed(pipeline, "flood", count: 300, from: start, every: 10)
        let flood = pipeline.counters(deviceID: "flood")
        #expect(flood.heartRate == 134, "\(flood)")
        #expect(flood.tooFast == 166, "\(flood)")
        #expect(flood.flag?.contains("faster than a heart beats") == true)
        #expect(sink.heartRates.withLock { $0 } == 194)
    }
}
