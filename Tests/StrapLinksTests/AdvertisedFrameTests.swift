// SPDX-License-Identifier: MIT
@testable import StrapLinks
import BlueZ
import HRV
import Synchronization
import Testing
import WearMetrics

/// Polar frames as three adapters signal them: each frame once per adapter, in each
/// adapter's own order, seconds apart when few reach the bus, in bursts after a stall.
@Suite("Advertised frames heard by several adapters")
struct AdvertisedFrameTests {
    final class Rates: RecordSink {
        let rates = Mutex<[Double]>([])
        func receive(_ record: WearMetrics, kind: RecordKind) {
            if let hr = record[metric: "hr"] { rates.withLock { $0.append(hr) } }
        }
    }

    /// A worn strap's frame: contact, frame counter, heart rate.
    func frame(_ counter: UInt8, _ hr: UInt8) -> PolarHeartRate {
        PolarHeartRate(manufacturerData: [0x02 | (counter << 2), 0x00, hr, hr])!
    }

    @Test("an older frame signalled late by another adapter counts once, the newer one heard again not at all")
    func outOfOrder() {
        let sink = Rates()
        let pipeline = RecordPipeline(sink: sink, hrv: HRVEngineConfiguration())
        pipeline.advertisement(deviceID: "strap", frame(6, 96))  // the first frame heard: no record
        pipeline.advertisement(deviceID: "strap", frame(0, 98))  // hci13
        pipeline.advertisement(deviceID: "strap", frame(7, 97))  // hci15, the frame before, late
        pipeline.advertisement(deviceID: "strap", frame(0, 98))  // hci14
        #expect(sink.rates.withLock { $0 } == [98, 97])
    }

    @Test("the same counter with another rate is a new frame, eight later; the same frame again is not")
    func counterWraps() {
        let sink = Rates()
        let pipeline = RecordPipeline(sink: sink, hrv: HRVEngineConfiguration())
        pipeline.advertisement(deviceID: "strap", frame(6, 72))
        pipeline.advertisement(deviceID: "strap", frame(1, 75))
        pipeline.advertisement(deviceID: "strap", frame(1, 75))
        pipeline.advertisement(deviceID: "strap", frame(1, 83))
        #expect(sink.rates.withLock { $0 } == [75, 83])
    }

    @Test("a burst after a stall, three adapters' copies interleaved: each frame once")
    func burst() {
        let sink = Rates()
        let pipeline = RecordPipeline(sink: sink, hrv: HRVEngineConfiguration())
        pipeline.advertisement(deviceID: "strap", frame(0, 60))
        for f in [frame(1, 61), frame(6, 66), frame(1, 61), frame(7, 67), frame(6, 66), frame(2, 68), frame(7, 67), frame(2, 68)] {
            pipeline.advertisement(deviceID: "strap", f)
        }
        #expect(sink.rates.withLock { $0 } == [61, 66, 67, 68])
    }
}
