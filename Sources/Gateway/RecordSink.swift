// SPDX-License-Identifier: MIT
import WearMetrics

/// What a record was made from.
public enum RecordKind: String, Sendable, Hashable {
    /// One Heart Rate Measurement notification (hr, rr_ms).
    case heartRate = "heart_rate"
    /// A scheduled HRV emission from the RR intervals.
    case hrv
    /// Battery level or Device Information / Body Sensor Location read on connect.
    case device
    /// An indicated health measurement, such as a scale's weight or body composition.
    case measurement
}

/// Where records go: the stream command's output, the cache of `blegate run`, a
/// benchmark's counter.
///
/// Called on the thread that received the notification (the AcquireNotify reader or the
/// D-Bus dispatcher), one device's records in order. It must not block: hand the record
/// over and return.
public protocol RecordSink: Sendable {
    func receive(_ record: WearMetrics, kind: RecordKind)
}
