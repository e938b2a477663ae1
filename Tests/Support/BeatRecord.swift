// SPDX-License-Identifier: MIT
import GATT
import Normalization
import Simulator
import WearMetrics

/// One Heart Rate Measurement as it must come out of blegate, whichever way (stream's
/// JSON lines, the cache, the backend): the end-to-end tests compare these against the
/// simulator's payload log, one for one and in order.
public struct BeatRecord: Equatable, CustomStringConvertible, Sendable {
    public var hr: Double?
    public var rr: [Double]
    public var contact: String

    public init(hr: Double?, rr: [Double], contact: String) {
        self.hr = hr
        self.rr = rr
        self.contact = contact
    }

    public var description: String { "hr=\(hr.map { String($0) } ?? "-") rr=\(rr) contact=\(contact)" }

    /// RR values pass through a division by 1024: equal within rounding.
    public static func == (a: BeatRecord, b: BeatRecord) -> Bool {
        a.hr == b.hr && a.contact == b.contact && a.rr.count == b.rr.count
            && zip(a.rr, b.rr).allSatisfy { abs($0 - $1) < 1e-6 }
    }

    /// What the simulator sent to one device's 2A37, in order: the well-formed payloads
    /// decoded as the gateway must, and how many were malformed.
    public static func sent(_ sim: SimulatedBlueZ, _ address: String) throws -> (beats: [BeatRecord], malformed: Int) {
        let sent = sim.payloadLog.records(address: address)
            .filter { $0.uuid == bluetoothUUID(0x2A37) }
            .sorted { $0.sequence < $1.sequence }
        var beats: [BeatRecord] = []
        for record in sent where !record.malformed {
            let m = try HeartRateMeasurement(bytes: record.bytes)
            let r = WearMetricsNormalizer.record(heartRate: m, deviceID: address, at: UTCTimestamp(millisecondsSince1970: 0))
            beats.append(BeatRecord(hr: r[metric: "hr"], rr: r.rrIntervals ?? [], contact: r.meta["sensor_contact"] ?? ""))
        }
        return (beats, sent.filter(\.malformed).count)
    }
}
