// SPDX-License-Identifier: MIT
@testable import StrapLinks
import BlueZ
import HRV
import Synchronization
import Testing
import WearMetrics

/// Polar frames as three adapters signal them: each frame once per adapter, in each
/// adapter's own order, and seconds apart when few reach the bus.
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

    @Test("an older frame signalled late by another adapter, then the newer one again: one record")
    func outOfOrder() {
        let sink = Rates()
        let pipeline = RecordPipeline(sink: sink, hrv: HRVEngineConfiguration())
        pipeline.advertisement(deviceID: "strap", frame(6, 96))  // the first frame heard: no record
        pipeline.advertisement(deviceID: "strap", frame(0, 98))  // hci13
        pipeline.advertisement(deviceID: "strap", frame(7, 97))  // hci15, the frame before
        pipeline.advertisement(deviceID: "strap", frame(0, 98))  // hci14
        #expect(sink.rates.withLock { $0 } == [98])
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

    @Test("frames five to seven ahead of the last after 3 s or more are new")
    func farAhead() {
        let last = (counter: UInt8(1), heartRate: UInt8(75), at: 100.0)
        #expect(RecordPipeline.isNewFrame((counter: 6, heartRate: 80, at: 105.0), after: last))
        #expect(!RecordPipeline.isNewFrame((counter: 0, heartRate: 74, at: 100.5), after: last))
        #expect(RecordPipeline.isNewFrame((counter: 4, heartRate: 78, at: 100.5), after: last))
    }
}
