// SPDX-License-Identifier: MIT
import Foundation

/// Items in the contract's shapes (docs/backend-openapi.yaml), good ones and a table of bad
/// ones each with the reason the contract's checks give, for both backends.
///
/// An item is its members as raw JSON text in order, so a bad one is a good one with one
/// member changed, removed or added.
struct ContractItem: Sendable {
    var members: [(key: String, json: String)]

    var text: String { "{" + members.map { "\"\($0.key)\":\($0.json)" }.joined(separator: ",") + "}" }

    func with(_ key: String, _ json: String) -> ContractItem {
        var copy = self
        if let i = copy.members.firstIndex(where: { $0.key == key }) { copy.members[i].json = json } else { copy.members.append((key, json)) }
        return copy
    }

    func without(_ key: String) -> ContractItem {
        var copy = self
        copy.members.removeAll { $0.key == key }
        return copy
    }

    /// A fresh id under `key`, so items of one batch do not collide.
    func fresh(_ key: String = "id") -> ContractItem { with(key, "\"\(UUID().uuidString.lowercased())\"") }
}

enum ContractExamples {
    static func record(client: String? = "c-1", device: String = "A0:9E:1A:00:00:01") -> ContractItem {
        ContractItem(members: [
            ("id", "\"\(UUID().uuidString.lowercased())\""), ("client_id", client.map { "\"\($0)\"" } ?? "null"),
            ("timestamp", "\"2026-11-25T10:00:00.120Z\""), ("device_id", "\"\(device)\""), ("source", "\"ble_hrm\""),
            ("metrics", #"{"hr":121,"hrv_rmssd":41.5}"#), ("meta", #"{"battery":"0.9","contact":true,"hr_status":1}"#),
            ("rr_ms", "[496.1,502]"),
        ])
    }

    static func workout(gateway: String) -> ContractItem {
        ContractItem(members: [
            ("id", "\"\(UUID().uuidString.lowercased())\""), ("client_id", "\"c-1\""), ("source", "\"blegate\""),
            ("gateway_id", "\"\(gateway)\""), ("device_id", "\"A0:9E:1A:00:00:01\""), ("workout_type", "\"hiit\""),
            ("class_name", "\"HIIT 7am\""), ("start_time", "\"2026-11-25T07:00:00.000Z\""), ("end_time", "\"2026-11-25T07:45:00.000Z\""),
            ("duration_seconds", "2700"), ("calories_active", "412.5"), ("distance_meters", "0"), ("avg_heart_rate", "141.2"),
            ("max_heart_rate", "176"), ("min_heart_rate", "92"), ("seconds_in_zone", "[100,500,600,700,500,300]"),
            ("effort_points", "41.5"), ("trimp", "88.1"), ("hrv_rmssd_ms", "38.2"), ("coverage", "0.987"),
            ("formulas", #"{"zones":"pct-hrmax-v1","kcal":"keytel-2005","points":"zone-points-v1"}"#),
            ("source_device", "\"Polar H10 8C4F2A1B\""),
        ])
    }

    static func profileMetric(metric: String = "weight", value: String = "81.2", unit: String = "kg") -> ContractItem {
        ContractItem(members: [
            ("id", "\"\(UUID().uuidString.lowercased())\""), ("client_id", "\"c-1\""), ("metric", "\"\(metric)\""), ("value", value),
            ("unit", "\"\(unit)\""), ("measured_at", "\"2026-11-25T09:58:00.000Z\""), ("source", "\"blegate\""),
            ("device_id", "\"C4:7C:8D:6A:11:02\""),
        ])
    }

    static func sample(type: String = "heartRate", unit: String = "count/min") -> ContractItem {
        ContractItem(members: [
            ("dataType", "\"\(type)\""), ("value", "120"), ("unit", "\"\(unit)\""), ("startDate", "\"2026-11-25T10:00:00.000Z\""),
            ("endDate", "\"2026-11-25T10:00:00.000Z\""), ("uuid", "\"\(UUID().uuidString.lowercased())\""), ("sourceName", "\"blegate\""),
            ("deviceName", "\"Polar H10\""), ("deviceId", "\"A0:9E\""), ("clientId", "\"c-1\""),
            ("recordId", "\"\(UUID().uuidString.lowercased())\""),
        ])
    }

    /// Records the contract accepts: unpaired, without RR intervals, integral numbers as `1.0`.
    static var goodRecords: [ContractItem] {
        [record(), record(client: nil), record().without("rr_ms"), record().with("metrics", #"{"hr":120.0}"#).with("meta", "{}")]
    }

    static let badRecords: [(ContractItem, String)] = [
        (record().with("id", "\"nope\""), "id: must be a UUID string (8-4-4-4-12 hex)"),
        (record().without("client_id"), "client_id: required"),
        (record().with("client_id", "\"\""), "client_id: must be a non-empty string or null"),
        (record().with("client_id", "7"), "client_id: must be a non-empty string or null"),
        (record().with("timestamp", "\"2026-11-25 10:00:00\""), "timestamp: must be an ISO 8601 time with Z or an offset within ±15:59, such as 2026-01-02T03:04:05.678Z"),
        (record().with("timestamp", "\"2026-02-30T10:00:00.000Z\""), "timestamp: must be an ISO 8601 time with Z or an offset within ±15:59, such as 2026-01-02T03:04:05.678Z"),
        (record().with("timestamp", "\"2026-11-25T10:00:00.000+16:00\""), "timestamp: must be an ISO 8601 time with Z or an offset within ±15:59, such as 2026-01-02T03:04:05.678Z"),
        (record().with("device_id", "\"A0\\u0000\""), "device_id: must not contain NUL (\\u0000)"),
        (record().with("device_id", "\"\""), "device_id: must be a non-empty string"),
        (record().with("source", "\"\""), "source: must be a non-empty string"),
        (record().without("metrics"), "metrics: required"),
        (record().with("metrics", "[]"), "metrics: must be an object of numbers"),
        (record().with("metrics", #"{"hr":"fast"}"#), "metrics.hr: must be a number"),
        (record().with("meta", #"{"battery":[1]}"#), "meta.battery: must be a string, number or boolean"),
        (record().with("rr_ms", "[500,0]"), "rr_ms: must be an array of positive numbers (milliseconds)"),
        (record().with("battery", "0.9"), "battery: unknown field; extensions belong in metrics or meta"),
    ]

    /// Workouts the contract accepts: open gym (`class_name` null), an empty class name, kcal
    /// and distance null, no RMSSD, no `distance_meters` key at all, an unnamed strap, a
    /// paired member's and an unpaired one's.
    static func goodWorkouts(gateway: String) -> [ContractItem] {
        [
            workout(gateway: gateway),
            workout(gateway: gateway).with("class_name", "null").with("client_id", "null"),
            workout(gateway: gateway).with("class_name", "\"\"").with("calories_active", "null").with("distance_meters", "null").without("hrv_rmssd_ms"),
            workout(gateway: gateway).without("distance_meters"),
            workout(gateway: gateway).with("source_device", "\"\"").with("duration_seconds", "2700.0"),
        ]
    }

    static func badWorkouts(gateway: String) -> [(ContractItem, String)] {
        let w = workout(gateway: gateway)
        return [
            (w.fresh().with("id", "\"W-1\""), "id: must be a UUID string (8-4-4-4-12 hex)"),
            (w.fresh().with("source", "\"garmin\""), "source: must be \"blegate\""),
            (w.fresh().without("formulas"), "formulas: required"),
            (w.fresh().without("effort_points"), "effort_points: required"),
            (w.fresh().without("trimp"), "trimp: required"),
            (w.fresh().without("gateway_id"), "gateway_id: required"),
            (w.fresh().without("source_device"), "source_device: required"),
            (w.fresh().without("client_id"), "client_id: required"),
            (w.fresh().without("class_name"), "class_name: required"),
            (w.fresh().with("notes", "\"x\""), "notes: unknown field"),
            (w.fresh().with("client_id", "\"\""), "client_id: must be a non-empty string or null"),
            (w.fresh().with("gateway_id", "\"\""), "gateway_id: must be a non-empty string"),
            (w.fresh().with("device_id", "\"\""), "device_id: must be a non-empty string"),
            (w.fresh().with("source_device", "null"), "source_device: must be a string"),
            (w.fresh().with("workout_type", "\"swim\""), "workout_type: must be one of cycle, hiit, other, run, strength, walk"),
            (w.fresh().with("class_name", "5"), "class_name: must be a string or null"),
            (w.fresh().with("start_time", "\"07:00\""), "start_time: must be an ISO 8601 time with Z or an offset within ±15:59"),
            (w.fresh().with("end_time", "\"2026-11-25T06:59:59.000Z\""), "end_time: must not be before start_time"),
            (w.fresh().with("duration_seconds", "2700.5"), "duration_seconds: must be a non-negative integer"),
            (w.fresh().with("duration_seconds", "-1"), "duration_seconds: must be a non-negative integer"),
            (w.fresh().with("calories_active", "-5"), "calories_active: must be a non-negative number or null"),
            (w.fresh().with("distance_meters", "-1"), "distance_meters: must be a non-negative number or null"),
            (w.fresh().with("distance_meters", "\"far\""), "distance_meters: must be a non-negative number or null"),
            (w.fresh().with("hrv_rmssd_ms", "\"high\""), "hrv_rmssd_ms: must be a non-negative number when present"),
            (w.fresh().with("avg_heart_rate", "\"fast\""), "avg_heart_rate: must be a non-negative number"),
            (w.fresh().with("effort_points", "-0.5"), "effort_points: must be a non-negative number"),
            (w.fresh().with("max_heart_rate", "176.5"), "max_heart_rate: must be a non-negative integer"),
            (w.fresh().with("seconds_in_zone", "[100,500,600,700,800]"), "seconds_in_zone: must be 6 non-negative integers (below zone 1, zones 1 to 5)"),
            (w.fresh().with("seconds_in_zone", "[100,500,600,700,500.5,299.5]"), "seconds_in_zone: must be 6 non-negative integers (below zone 1, zones 1 to 5)"),
            (w.fresh().with("seconds_in_zone", "[100,500,600,700,500,301]"), "seconds_in_zone: must add up to duration_seconds"),
            (w.fresh().with("coverage", "1.2"), "coverage: must be a number from 0 to 1"),
            (w.fresh().with("formulas", #"{"zones":"z","points":"p"}"#), "formulas: must be an object with zones, kcal and points version strings"),
        ]
    }

    static var goodProfileMetrics: [ContractItem] {
        [profileMetric(), profileMetric(metric: "height", value: "180", unit: "cm"), profileMetric(metric: "body_fat", value: "18.5", unit: "percent")]
    }

    static let badProfileMetrics: [(ContractItem, String)] = [
        (profileMetric().with("id", "1"), "id: must be a UUID string (8-4-4-4-12 hex)"),
        (profileMetric().with("source", "\"scale\""), "source: must be \"blegate\""),
        (profileMetric().without("client_id"), "client_id: required"),
        (profileMetric().without("device_id"), "device_id: required"),
        (profileMetric().with("bmi", "22"), "bmi: unknown field"),
        (profileMetric().with("client_id", "null"), "client_id: must be a non-empty string"),
        (profileMetric().with("metric", "\"bmi\""), "metric: must be height, weight or body_fat"),
        (profileMetric(metric: "height", value: "180", unit: "kg"), "unit: must be cm for height"),
        (profileMetric().with("value", "0"), "value: must be a positive number"),
        (profileMetric().with("value", "-3"), "value: must be a positive number"),
        (profileMetric().with("measured_at", "\"today\""), "measured_at: must be an ISO 8601 time with Z or an offset within ±15:59"),
        (profileMetric().with("device_id", "\"\""), "device_id: must be a non-empty string"),
    ]

    static var goodSamples: [ContractItem] {
        [sample(), sample(type: "heartRateVariabilityRMSSD", unit: "ms"),
         sample(type: "heartRateVariabilitySDNN", unit: "ms").without("deviceId").without("clientId").without("recordId"),
         sample().fresh("uuid").with("clientId", "null")]
    }

    /// Each makes its whole request a 400 with `samples[0].<reason>`.
    static let badSamples: [(ContractItem, String)] = [
        (sample().with("uuid", "\"x\""), "uuid: must be a UUID string (8-4-4-4-12 hex)"),
        (sample(type: "steps"), "dataType: must be one of heartRate, heartRateVariabilityRMSSD, heartRateVariabilitySDNN"),
        (sample().with("value", "\"120\""), "value: must be a number"),
        (sample(unit: "bpm"), "unit: must be count/min or ms"),
        (sample().with("startDate", "\"now\""), "startDate: must be an ISO 8601 time with Z or an offset within ±15:59"),
        (sample().with("sourceName", "\"other\""), "sourceName: must be \"blegate\""),
        (sample().without("deviceName"), "deviceName: must be a string"),
        (sample().with("recordId", "\"r-1\""), "recordId: must be a UUID string (8-4-4-4-12 hex)"),
    ]
}
