// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GATT
import Normalization
import Timing
import WearMetrics

/// `blegate-bench json-encode`: ns to write one typical heart-rate record as JSON with
/// `WearMetrics.appendJSON` (what sync and `blegate stream` do) and with `JSONEncoder` on
/// the record's `Encodable` form. Build with `-c release`.
func runJSONEncodeBenchmarks(_ arguments: [String]) {
    let clock = ContinuousClock()
    let iterations = Int(arguments.first ?? "") ?? 200_000
    // HR 72 bpm, contact detected, 2 RR values; battery and sensor location known:
    // metrics {hr}, meta {sensor_contact, rr_count, battery, body_sensor_location}, rr_ms [2].
    var meta = DeviceMeta()
    meta.absorb(try! GATTDecoder.decode(.batteryLevel, bytes: [0x52]))
    meta.absorb(try! GATTDecoder.decode(.bodySensorLocation, bytes: [0x01]))
    let record = WearMetricsNormalizer.record(heartRate: try! HeartRateMeasurement(bytes: [0x16, 0x48, 0x10, 0x03, 0x18, 0x03]),
                                              deviceID: "A0:9E:1A:10:0A:E2", at: UTCTimestamp(millisecondsSince1970: 1_767_238_262_000),
                                              deviceMeta: meta)
    var checksum = 0
    var buffer: [UInt8] = []
    buffer.reserveCapacity(512)
    let sorted = JSONEncoder()
    sorted.outputFormatting = [.sortedKeys]
    let plain = JSONEncoder()
    // Warm-up, and the texts once for the report.
    for _ in 0..<5_000 {
        buffer.removeAll(keepingCapacity: true)
        record.appendJSON(to: &buffer)
        checksum += buffer.count + ((try? sorted.encode(record).count) ?? 0) + ((try? plain.encode(record).count) ?? 0)
    }
    print("record: \(record.jsonString())")
    print("JSONEncoder .sortedKeys: \(String(decoding: (try? sorted.encode(record)) ?? Data(), as: UTF8.self))")
    let append = clock.measure {
        for _ in 0..<iterations {
            buffer.removeAll(keepingCapacity: true)
            record.appendJSON(to: &buffer)
            checksum &+= buffer.count
        }
    }
    reportPerRecord("appendJSON into a reused buffer (sync's batch)", append, iterations)
    let string = clock.measure {
        for _ in 0..<iterations { checksum &+= record.jsonString().utf8.count }
    }
    reportPerRecord("jsonString() (a String per record: stream's line)", string, iterations)
    let encoderSorted = clock.measure {
        for _ in 0..<iterations { checksum &+= (try? sorted.encode(record).count) ?? 0 }
    }
    reportPerRecord("JSONEncoder .sortedKeys, encoder reused", encoderSorted, iterations)
    let encoderPlain = clock.measure {
        for _ in 0..<iterations { checksum &+= (try? plain.encode(record).count) ?? 0 }
    }
    reportPerRecord("JSONEncoder, unsorted, encoder reused", encoderPlain, iterations)
    print("checksum \(checksum)")
}

private func reportPerRecord(_ name: String, _ elapsed: Duration, _ iterations: Int) {
    let ns = elapsed.seconds * 1e9 / Double(iterations)
    print("\(name): \((ns * 10).rounded() / 10) ns/record over \(iterations) records")
}
