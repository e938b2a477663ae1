// SPDX-License-Identifier: MIT
import Outbox
import WearMetrics

/// WearMetrics → samples, for backends that store individual samples (docs/sync.md).
///
/// | metric                         | dataType                     | unit      | interval            |
/// |--------------------------------|------------------------------|-----------|---------------------|
/// | `hr`                           | `heartRate`                  | count/min | the instant         |
/// | `hrv_rmssd`                    | `heartRateVariabilityRMSSD`  | ms        | `meta.hrv_window_s` |
/// | `hrv_sdnn`, `hrv_sdnn_<N>s_ms` | `heartRateVariabilitySDNN`   | ms        | the SDNN window     |
///
/// Battery is not mapped: it describes the strap, not the member, and a samples backend
/// files everything under the member. Records with none of these metrics (cadence, power,
/// battery-only) have nothing to send to this sink. It reads the record's fields as the
/// cache hands them over.
public enum SampleMapping {
    public static func samples(for item: OutboxRecord) -> [Sample] {
        let r = item.record
        var out: [Sample] = []
        let name = deviceName(r)
        func add(_ type: String, _ value: Double, _ unit: String, windowSeconds: Double?) {
            let start: UTCTimestamp
            if let w = windowSeconds, w.isFinite, w > 0 {
                start = UTCTimestamp(millisecondsSince1970: r.timestamp.millisecondsSince1970 - Int64((w * 1000).rounded()))
            } else {
                start = r.timestamp
            }
            out.append(Sample(dataType: type, value: value, unit: unit, startDate: start, endDate: r.timestamp,
                              uuid: sampleUUID(recordID: item.id, dataType: type), deviceName: name,
                              deviceID: r.deviceID, clientID: item.clientID, recordID: item.id))
        }
        if let hr = r[metric: "hr"] { add("heartRate", hr, "count/min", windowSeconds: nil) }
        if let rmssd = r[metric: "hrv_rmssd"] {
            add("heartRateVariabilityRMSSD", rmssd, "ms", windowSeconds: r.meta["hrv_window_s"].flatMap(Double.init))
        }
        if let (key, sdnn) = r.metrics.entries.first(where: { $0.key == "hrv_sdnn" || ($0.key.hasPrefix("hrv_sdnn_") && $0.key.hasSuffix("s_ms")) }) {
            var window = r.meta["hrv_sdnn_window_s"].flatMap(Double.init)
            if window == nil, key != "hrv_sdnn" { window = Double(key.dropFirst("hrv_sdnn_".count).dropLast("s_ms".count)) }
            add("heartRateVariabilitySDNN", sdnn, "ms", windowSeconds: window)
        }
        return out
    }

    public static func sampleUUID(recordID: String, dataType: String) -> String {
        // The namespace is a valid constant, so v5 cannot fail.
        NameBasedUUID.v5(namespace: NameBasedUUID.sampleNamespace, name: recordID + "/" + dataType)!
    }

    /// Model and manufacturer from Device Information when known, else the device id.
    static func deviceName(_ r: WearMetrics) -> String {
        let parts = [r.meta["manufacturer_name"], r.meta["model_number"]].compactMap { $0 }.filter { !$0.isEmpty }
        if !parts.isEmpty { return parts.joined(separator: " ") }
        return r.meta["name"] ?? r.deviceID
    }
}
