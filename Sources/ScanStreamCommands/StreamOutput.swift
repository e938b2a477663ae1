import ArgumentParser
import GATT
import StrapLinks
import Synchronization
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// Writes records to stdout as JSON lines or as a human live line, through libc's
/// buffer: the notification thread only copies bytes, and a timer flushes them.
final class StdoutRecordSink: RecordSink {
    enum Format: String, Sendable, CaseIterable, ExpressibleByArgument { case json, text, none }

    let format: Format
    private let names: Mutex<[String: String]>
    private let written = Atomic<Int>(0)

    init(format: Format) {
        self.format = format
        self.names = Mutex([:])
    }

    var recordsWritten: Int { written.load(ordering: .relaxed) }

    func setName(_ name: String, for address: String) {
        names.withLock { $0[address] = name }
    }

    func receive(_ record: WearMetrics, kind: RecordKind) {
        switch format {
        case .none:
            written.add(1, ordering: .relaxed)
            return
        case .json:
            var line = record.jsonString()
            line.append("\n")
            write(line)
        case .text:
            write(textLine(record, kind: kind) + "\n")
        }
    }

    /// Bytes waiting for the next flush; written at once beyond 64 KiB.
    private let buffer = Mutex<[UInt8]>([])

    private func write(_ line: String) {
        var line = line
        // Written under the lock, so lines from both notification threads keep their order.
        line.withUTF8 { b in
            buffer.withLock { buf in
                buf.append(contentsOf: b)
                if buf.count >= 65_536 {
                    Self.writeAll(buf)
                    buf.removeAll(keepingCapacity: true)
                }
            }
        }
        written.add(1, ordering: .relaxed)
    }

    func flush() {
        buffer.withLock { buf in
            if !buf.isEmpty { Self.writeAll(buf) }
            buf.removeAll(keepingCapacity: true)
        }
    }

    private static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { b in
            var offset = 0
            while offset < b.count {
                let n = Glibc.write(1, b.baseAddress! + offset, b.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }

    private func textLine(_ r: WearMetrics, kind: RecordKind) -> String {
        let name = names.withLock { $0[r.deviceID] } ?? r.deviceID
        var out = r.timestamp.iso8601 + "  " + name
        switch kind {
        case .heartRate:
            if let hr = r[metric: "hr"] { out += "  HR \(Int(hr)) bpm" } else { out += "  HR -" }
            if let rr = r.rrIntervals, !rr.isEmpty { out += "  RR " + rr.map { String(Int($0.rounded())) }.joined(separator: ",") + " ms" }
            if let mean = r[metric: "hr_mean"] { out += "  mean " + formatFixed(mean, decimals: 1) }
            if let c = r.meta["sensor_contact"] { out += "  contact " + c }
            if let b = r.meta["battery"], let f = Double(b) { out += "  battery \(Int((f * 100).rounded()))%" }
        case .hrv:
            if let v = r[metric: "hrv_rmssd"] { out += "  RMSSD " + formatFixed(v, decimals: 1) + " ms" }
            if let v = r[metric: "hrv_sdnn"] ?? r.metrics.entries.first(where: { $0.key.hasPrefix("hrv_sdnn_") })?.value {
                out += "  SDNN " + formatFixed(v, decimals: 1) + " ms"
            }
            if let v = r[metric: "hrv_pnn50_pct"] { out += "  pNN50 " + formatFixed(v, decimals: 1) + " %" }
            if let w = r.meta["hrv_window_s"] { out += "  (window \(w) s)" }
        case .device:
            out += "  " + r.meta.entries.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        case .measurement:
            out += "  " + r.metrics.entries.map { "\($0.key)=" + formatFixed($0.value, decimals: 2) }.joined(separator: " ")
        }
        return out
    }
}

/// `--interval S`: one heart-rate record per device per interval, like the Synheart Wear
/// SDK's `streamHR(interval:)`, which reports the current reading at each tick. Here the
/// record also carries the interval's mean, minimum and maximum and every RR interval
/// received in it, so nothing measured is thrown away. HRV and device records pass
/// through as they come.
final class IntervalAggregator: RecordSink {
    struct Bucket {
        var last: WearMetrics
        var hr: [Double] = []
        var rr: [Double] = []
        var samples = 0
    }

    let next: any RecordSink
    let interval: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    init(next: any RecordSink, interval: Double) {
        self.next = next
        self.interval = interval
    }

    func receive(_ record: WearMetrics, kind: RecordKind) {
        guard kind == .heartRate else {
            next.receive(record, kind: kind)
            return
        }
        buckets.withLock { b in
            var bucket = b[record.deviceID] ?? Bucket(last: record)
            bucket.last = record
            bucket.samples += 1
            if let hr = record[metric: "hr"] { bucket.hr.append(hr) }
            if let rr = record.rrIntervals { bucket.rr.append(contentsOf: rr) }
            b[record.deviceID] = bucket
        }
    }

    /// Emits one record per device that sent anything since the last tick.
    func tick(now: UTCTimestamp) {
        let due = buckets.withLock { b -> [Bucket] in
            defer { b.removeAll() }
            return b.values.sorted { $0.last.deviceID < $1.last.deviceID }
        }
        for bucket in due {
            var r = WearMetrics(timestamp: now, deviceID: bucket.last.deviceID, source: bucket.last.source,
                                meta: bucket.last.meta, rrIntervals: bucket.rr.isEmpty ? nil : bucket.rr)
            r.setMetric("hr", bucket.last[metric: "hr"])
            if !bucket.hr.isEmpty {
                r.setMetric("hr_mean", (bucket.hr.reduce(0, +) / Double(bucket.hr.count) * 10).rounded() / 10)
                r.setMetric("hr_min", bucket.hr.min())
                r.setMetric("hr_max", bucket.hr.max())
            }
            r.meta["interval_s"] = formatFixed(interval, decimals: interval == interval.rounded() ? 0 : 1)
            r.meta["samples"] = String(bucket.samples)
            r.meta["rr_count"] = bucket.rr.isEmpty ? nil : String(bucket.rr.count)
            next.receive(r, kind: .heartRate)
        }
    }
}
