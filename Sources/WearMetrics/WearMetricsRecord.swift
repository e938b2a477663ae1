// SPDX-License-Identifier: MIT

/// An insertion-ordered, unique-key list. Records hold a handful of entries, for which
/// a linear scan beats hashing, and JSON output keeps a stable, readable order.
///
/// Inlinable: every notification reads and writes a few of these in other modules
/// (normalizer, workouts, wall), and an unspecialized generic pays a lookup of its tuple
/// type's metadata on each access.
public struct KeyValueList<Value: Sendable & Equatable>: Sendable, Equatable {
    @usableFromInline var storage: [(key: String, value: Value)] = []

    public var entries: [(key: String, value: Value)] {
        @inlinable get { storage }
    }

    @inlinable public init() {}

    @inlinable public init(_ pairs: [(String, Value)]) {
        for (k, v) in pairs { self[k] = v }
    }

    @inlinable public static func == (a: KeyValueList, b: KeyValueList) -> Bool {
        a.storage.count == b.storage.count && zip(a.storage, b.storage).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    @inlinable public var isEmpty: Bool { storage.isEmpty }
    @inlinable public var count: Int { storage.count }
    @inlinable public var keys: [String] { storage.map(\.key) }

    @inlinable public subscript(key: String) -> Value? {
        get {
            for e in storage where e.key == key { return e.value }
            return nil
        }
        set {
            if let i = storage.firstIndex(where: { $0.key == key }) {
                if let newValue { storage[i].value = newValue } else { storage.remove(at: i) }
            } else if let newValue {
                storage.append((key, newValue))
            }
        }
    }

    @inlinable package mutating func reserveCapacity(_ n: Int) { storage.reserveCapacity(n) }

    /// Appends a key the caller knows is not in the list yet.
    @inlinable package mutating func appendNew(_ key: String, _ value: Value) { storage.append((key, value)) }
}

/// A Synheart Wear v1.0 record (`synheart-wear` `schema/metrics.schema.json`).
///
/// Top-level keys are exactly `timestamp`, `device_id`, `source`, `metrics`, `meta` and
/// (when present) `rr_ms` — the schema has `additionalProperties: false`, so every
/// extension lives inside `metrics` or `meta`.
public struct WearMetrics: Sendable, Equatable {
    public var timestamp: UTCTimestamp
    public var deviceID: String
    /// One per GATT service: `ble_hrm`, `ble_rsc`, `ble_csc`, `ble_cps`, `ble_ftms`,
    /// `ble_plx`, `ble_hts`, `ble_wss`, `ble_bcs`, `ble_device`.
    public var source: String
    /// Values are always finite: `setMetric` drops NaN and infinities.
    public private(set) var metrics: KeyValueList<Double>
    public var meta: KeyValueList<String>
    /// RR intervals of this notification in ms, oldest first, unfiltered.
    public var rrIntervals: [Double]?

    public init(timestamp: UTCTimestamp, deviceID: String, source: String,
                metrics: KeyValueList<Double> = KeyValueList(), meta: KeyValueList<String> = KeyValueList(),
                rrIntervals: [Double]? = nil) {
        self.timestamp = timestamp
        self.deviceID = deviceID
        self.source = source
        self.meta = meta
        // Copy without rebuilding in the common case where everything is finite.
        if metrics.entries.allSatisfy({ $0.value.isFinite }) {
            self.metrics = metrics
        } else {
            self.metrics = KeyValueList()
            for (k, v) in metrics.entries { setMetric(k, v) }
        }
        if let rr = rrIntervals, !rr.allSatisfy(\.isFinite) {
            self.rrIntervals = rr.filter(\.isFinite)
        } else {
            self.rrIntervals = rrIntervals
        }
    }

    /// Sets a metric; non-finite values are dropped (JSON cannot carry them, and the
    /// reference's rule is "omit the metric").
    public mutating func setMetric(_ key: String, _ value: Double?) {
        guard let value, value.isFinite else { return }
        metrics[key] = value
    }

    public mutating func removeMetric(_ key: String) { metrics[key] = nil }

    public subscript(metric key: String) -> Double? { metrics[key] }
}
