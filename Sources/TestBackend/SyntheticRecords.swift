// SPDX-License-Identifier: MIT
import Outbox
import WearMetrics

/// Deterministic heart-rate records for tests and benchmarks: `count` records spread
/// round-robin over `devices` straps, one per second per strap, with RR intervals.
public enum SyntheticRecords {
    public static func heartRate(count: Int, devices: Int = 10, firstSequence: Int64 = 1,
                                 start: UTCTimestamp = UTCTimestamp(millisecondsSince1970: 1_767_225_600_000),
                                 clientID: (Int) -> String? = { "member-\($0)" }) -> [OutboxRecord] {
        (0..<count).map { i in
            let sequence = firstSequence + Int64(i)
            let device = i % max(devices, 1)
            let second = Int64(i / max(devices, 1))
            let hr = 60 + Double((i * 7) % 90)
            let rr = 60_000 / hr
            let record = WearMetrics(
                timestamp: UTCTimestamp(millisecondsSince1970: start.millisecondsSince1970 + second * 1000 + Int64(device)),
                deviceID: deviceID(device), source: "ble_hrm",
                metrics: KeyValueList([("hr", hr)]),
                meta: KeyValueList([("battery", "0.82"), ("hr_status", "ok")]),
                rrIntervals: [rr.rounded(), (rr + 3).rounded()]
            )
            return OutboxRecord(id: recordID(sequence), clientID: clientID(device), sequence: sequence, record: record)
        }
    }

    /// `A0:9E:1A:00:00:07` for device 7.
    public static func deviceID(_ n: Int) -> String {
        let hex = String(n, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return "A0:9E:1A:00:\(padded.prefix(2)):\(padded.suffix(2))"
    }

    /// A valid version-4-shaped UUID that encodes the sequence, so failures are readable.
    public static func recordID(_ sequence: Int64) -> String {
        let hex = String(UInt64(bitPattern: sequence), radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }
}
