// SPDX-License-Identifier: MIT

/// What happens to a record that fails validation.
public enum ValidationPolicy: String, Sendable, Equatable {
    /// Drop the record, as the Synheart Wear SDK's `Normalizer.validateMetrics` does.
    /// The default: a consumer validating with the SDK would reject it anyway.
    case drop
    /// Keep the record and its values, and list the failures in `meta.validation_flags`
    /// (comma-separated), for deployments that want to see implausible readings.
    case flag
}

/// Validation as the Synheart Wear SDK does it: HR outside 30…220 bpm, RMSSD outside
/// 0…500 ms and negative steps fail.
public struct WearMetricsValidator: Sendable, Equatable {
    public var policy: ValidationPolicy
    public var heartRateRange: ClosedRange<Double>
    public var rmssdRange: ClosedRange<Double>

    public init(policy: ValidationPolicy = .drop, heartRateRange: ClosedRange<Double> = 30...220,
                rmssdRange: ClosedRange<Double> = 0...500) {
        self.policy = policy
        self.heartRateRange = heartRateRange
        self.rmssdRange = rmssdRange
    }

    /// The failures of `record` (empty when valid).
    public func failures(_ record: WearMetrics) -> [String] {
        var f: [String] = []
        if let hr = record[metric: "hr"], !heartRateRange.contains(hr) { f.append("hr_out_of_range") }
        if let r = record[metric: "hrv_rmssd"], !rmssdRange.contains(r) { f.append("hrv_rmssd_out_of_range") }
        if let s = record[metric: "steps"], s < 0 { f.append("steps_negative") }
        return f
    }

    /// The record to report: unchanged when valid; nil (drop) or flagged otherwise.
    public func validate(_ record: WearMetrics) -> WearMetrics? {
        let f = failures(record)
        if f.isEmpty { return record }
        switch policy {
        case .drop:
            return nil
        case .flag:
            var r = record
            r.meta["validation_flags"] = f.joined(separator: ",")
            return r
        }
    }
}

/// Freshness: a record older than `maximumAge` is never reported as current (Synheart's
/// default is 24 h). Records stamped in the future by more than `clockSkewAllowance`
/// are not current either: the device or the gateway clock is wrong.
public struct FreshnessPolicy: Sendable, Equatable {
    /// Seconds (default 86 400 = 24 h).
    public var maximumAge: Double
    /// Seconds (default 300).
    public var clockSkewAllowance: Double

    public init(maximumAge: Double = 86_400, clockSkewAllowance: Double = 300) {
        self.maximumAge = maximumAge
        self.clockSkewAllowance = clockSkewAllowance
    }

    public func isCurrent(_ record: WearMetrics, now: UTCTimestamp) -> Bool {
        let age = Double(now.millisecondsSince1970 - record.timestamp.millisecondsSince1970) / 1000
        return age <= maximumAge && age >= -clockSkewAllowance
    }
}

/// The latest record per device and source, served only while fresh.
public struct CurrentMetricsStore: Sendable {
    public var freshness: FreshnessPolicy
    private var latest: [String: WearMetrics] = [:]

    public init(freshness: FreshnessPolicy = FreshnessPolicy()) { self.freshness = freshness }

    private static func key(_ deviceID: String, _ source: String) -> String { deviceID + "\u{0}" + source }

    /// Keeps `record` if it is newer than the stored one for its device and source.
    public mutating func update(_ record: WearMetrics) {
        let k = CurrentMetricsStore.key(record.deviceID, record.source)
        if let old = latest[k], old.timestamp > record.timestamp { return }
        latest[k] = record
    }

    /// The current record, or nil if none or stale.
    public func current(deviceID: String, source: String, now: UTCTimestamp) -> WearMetrics? {
        guard let r = latest[CurrentMetricsStore.key(deviceID, source)], freshness.isCurrent(r, now: now) else { return nil }
        return r
    }

    /// All current records, sorted by device and source.
    public func currentRecords(now: UTCTimestamp) -> [WearMetrics] {
        latest.values.filter { freshness.isCurrent($0, now: now) }
            .sorted { ($0.deviceID, $0.source) < ($1.deviceID, $1.source) }
    }

    /// Drops stale records (call occasionally to bound memory).
    public mutating func prune(now: UTCTimestamp) {
        latest = latest.filter { freshness.isCurrent($0.value, now: now) }
    }
}
