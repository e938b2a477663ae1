// SPDX-License-Identifier: MIT
import WearMetrics

/// What a record was made from.
public enum RecordKind: String, Sendable, Hashable, CaseIterable {
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

    /// What one round of the AcquireNotify reader made, in order: every strap's records of
    /// one wake-up at once, so that a sink that takes a lock or wakes a thread per hand-off
    /// (the cache's writer, the class keeper) does so once per round, not per record.
    /// By default, each record in turn.
    func receive(_ batch: [SinkRecord])
}

/// A record and what it was made from, as one round of the reader hands them over.
public struct SinkRecord: Sendable {
    public var record: WearMetrics
    public var kind: RecordKind

    public init(_ record: WearMetrics, kind: RecordKind) {
        self.record = record
        self.kind = kind
    }
}

extension RecordSink {
    public func receive(_ batch: [SinkRecord]) {
        for r in batch { receive(r.record, kind: r.kind) }
    }
}
