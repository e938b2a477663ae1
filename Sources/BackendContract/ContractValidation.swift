// SPDX-License-Identifier: MIT
import JSON

/// The contract's checks of what a gateway sends (docs/backend-openapi.yaml `MetricsRecord`,
/// `Workout`, `ProfileMetric`, `Sample`): the one implementation both backends judge with
/// (the loopback test backend, blegate-server), so a gateway gets the same answer from each.
///
/// Each check answers nil for an acceptable item, else `field: what is wrong`. Records,
/// workouts and profile metrics that fail go back in the batch's `rejected`; a sample that
/// fails makes the whole request a 400 (the contract's samples answer has no `rejected`).
/// A number is an integer when it has no fraction, as JSON Schema counts them (`2700.0` is).
public enum ContractValidation {
    // MARK: MetricsRecord

    public static let recordKeys: Set<String> = ["id", "client_id", "timestamp", "device_id", "source", "metrics", "meta", "rr_ms"]
    static let requiredRecordKeys = ["id", "client_id", "timestamp", "device_id", "source", "metrics", "meta"]

    public static func recordProblem(_ record: JSONValue) -> String? {
        guard case let .object(members) = record else { return "record: must be a JSON object" }
        guard let id = record["id"]?.stringValue, ContractUUID.isValid(id) else { return uuidProblem("id") }
        if let p = keysProblem(members, allowed: recordKeys, required: requiredRecordKeys,
                               unknown: "unknown field; extensions belong in metrics or meta") { return p }
        if let p = clientProblem(record["client_id"]) { return p }
        guard let t = record["timestamp"]?.stringValue, ContractTimestamp.isValid(t) else {
            return "timestamp: must be an ISO 8601 UTC time such as 2026-01-02T03:04:05.678Z"
        }
        guard nonEmptyString(record["device_id"]) else { return "device_id: must be a non-empty string" }
        guard nonEmptyString(record["source"]) else { return "source: must be a non-empty string" }
        guard case let .object(metrics)? = record["metrics"] else { return "metrics: must be an object of numbers" }
        for (k, v) in metrics where v.doubleValue == nil { return "metrics.\(k): must be a number" }
        guard case let .object(meta)? = record["meta"] else { return "meta: must be an object" }
        for (k, v) in meta {
            switch v {
            case .string, .int, .double, .bool: continue
            default: return "meta.\(k): must be a string, number or boolean"
            }
        }
        if let rr = record["rr_ms"] {
            guard case let .array(values) = rr, values.allSatisfy({ ($0.doubleValue ?? -1) > 0 }) else {
                return "rr_ms: must be an array of positive numbers (milliseconds)"
            }
        }
        return nil
    }

    // MARK: Workout

    public static let workoutKeys: Set<String> = [
        "id", "client_id", "source", "gateway_id", "device_id", "workout_type", "class_name", "start_time", "end_time",
        "duration_seconds", "calories_active", "distance_meters", "avg_heart_rate", "max_heart_rate", "min_heart_rate",
        "seconds_in_zone", "effort_points", "trimp", "hrv_rmssd_ms", "coverage", "formulas", "source_device",
    ]
    static let requiredWorkoutKeys = workoutKeys.subtracting(["distance_meters", "hrv_rmssd_ms"]).sorted()
    public static let workoutTypes: Set<String> = ["run", "walk", "cycle", "strength", "hiit", "other"]

    public static func workoutProblem(_ w: JSONValue) -> String? {
        guard case let .object(members) = w else { return "workout: must be a JSON object" }
        guard let id = w["id"]?.stringValue, ContractUUID.isValid(id) else { return uuidProblem("id") }
        guard w["source"]?.stringValue == "blegate" else { return "source: must be \"blegate\"" }
        if let p = keysProblem(members, allowed: workoutKeys, required: requiredWorkoutKeys, unknown: "unknown field") { return p }
        if let p = clientProblem(w["client_id"]) { return p }
        for key in ["gateway_id", "device_id"] where !nonEmptyString(w[key]) { return "\(key): must be a non-empty string" }
        guard w["source_device"]?.stringValue != nil else { return "source_device: must be a string" }
        guard let type = w["workout_type"]?.stringValue, workoutTypes.contains(type) else {
            return "workout_type: must be one of \(workoutTypes.sorted().joined(separator: ", "))"
        }
        switch w["class_name"] {
        case .null?, .string?: break
        default: return "class_name: must be a string or null"
        }
        for key in ["start_time", "end_time"] {
            guard let t = w[key]?.stringValue, ContractTimestamp.isValid(t) else { return "\(key): must be an ISO 8601 UTC time" }
        }
        if let start = w["start_time"]?.stringValue.flatMap(ContractTimestamp.secondsSince1970),
           let end = w["end_time"]?.stringValue.flatMap(ContractTimestamp.secondsSince1970), end < start {
            return "end_time: must not be before start_time"
        }
        guard let duration = integer(w["duration_seconds"]), duration >= 0 else {
            return "duration_seconds: must be a non-negative integer"
        }
        switch w["calories_active"] {
        case .null?: break
        case let v? where (v.doubleValue ?? -1) >= 0: break
        default: return "calories_active: must be a non-negative number or null"
        }
        for key in ["distance_meters", "hrv_rmssd_ms"] where w[key] != nil {
            guard (w[key]?.doubleValue ?? -1) >= 0 else { return "\(key): must be a non-negative number when present" }
        }
        for key in ["avg_heart_rate", "effort_points", "trimp"] {
            guard (w[key]?.doubleValue ?? -1) >= 0 else { return "\(key): must be a non-negative number" }
        }
        for key in ["max_heart_rate", "min_heart_rate"] {
            guard (integer(w[key]) ?? -1) >= 0 else { return "\(key): must be a non-negative integer" }
        }
        guard case let .array(zones)? = w["seconds_in_zone"], zones.count == 6,
              zones.allSatisfy({ (integer($0) ?? -1) >= 0 }) else {
            return "seconds_in_zone: must be 6 non-negative integers (below zone 1, zones 1 to 5)"
        }
        guard zones.reduce(0, { $0 + (integer($1) ?? 0) }) == duration else {
            return "seconds_in_zone: must add up to duration_seconds"
        }
        guard let coverage = w["coverage"]?.doubleValue, (0...1).contains(coverage) else {
            return "coverage: must be a number from 0 to 1"
        }
        guard let formulas = w["formulas"], case .object = formulas,
              ["zones", "kcal", "points"].allSatisfy({ formulas[$0]?.stringValue != nil }) else {
            return "formulas: must be an object with zones, kcal and points version strings"
        }
        return nil
    }

    // MARK: ProfileMetric

    public static let profileMetricKeys: Set<String> = ["id", "client_id", "metric", "value", "unit", "measured_at", "source", "device_id"]
    /// Each metric's one unit.
    public static let profileMetricUnits: [String: String] = ["height": "cm", "weight": "kg", "body_fat": "percent"]

    public static func profileMetricProblem(_ m: JSONValue) -> String? {
        guard case let .object(members) = m else { return "metric: must be a JSON object" }
        guard let id = m["id"]?.stringValue, ContractUUID.isValid(id) else { return uuidProblem("id") }
        guard m["source"]?.stringValue == "blegate" else { return "source: must be \"blegate\"" }
        if let p = keysProblem(members, allowed: profileMetricKeys, required: profileMetricKeys.sorted(), unknown: "unknown field") {
            return p
        }
        guard nonEmptyString(m["client_id"]) else { return "client_id: must be a non-empty string" }
        guard let metric = m["metric"]?.stringValue, let unit = profileMetricUnits[metric] else {
            return "metric: must be height, weight or body_fat"
        }
        guard m["unit"]?.stringValue == unit else { return "unit: must be \(unit) for \(metric)" }
        guard let value = m["value"]?.doubleValue, value > 0 else { return "value: must be a positive number" }
        guard let t = m["measured_at"]?.stringValue, ContractTimestamp.isValid(t) else { return "measured_at: must be an ISO 8601 UTC time" }
        guard nonEmptyString(m["device_id"]) else { return "device_id: must be a non-empty string" }
        return nil
    }

    // MARK: Sample

    public static let sampleTypes: Set<String> = ["heartRate", "heartRateVariabilityRMSSD", "heartRateVariabilitySDNN"]
    public static let sampleUnits: Set<String> = ["count/min", "ms"]

    public static func sampleProblem(_ s: JSONValue) -> String? {
        guard case .object = s else { return "sample: must be a JSON object" }
        guard let uuid = s["uuid"]?.stringValue, ContractUUID.isValid(uuid) else { return uuidProblem("uuid") }
        guard let type = s["dataType"]?.stringValue, sampleTypes.contains(type) else {
            return "dataType: must be one of \(sampleTypes.sorted().joined(separator: ", "))"
        }
        guard s["value"]?.doubleValue != nil else { return "value: must be a number" }
        guard let unit = s["unit"]?.stringValue, sampleUnits.contains(unit) else { return "unit: must be count/min or ms" }
        for key in ["startDate", "endDate"] {
            guard let d = s[key]?.stringValue, ContractTimestamp.isValid(d) else { return "\(key): must be an ISO 8601 time" }
        }
        guard s["sourceName"]?.stringValue == "blegate" else { return "sourceName: must be \"blegate\"" }
        guard s["deviceName"]?.stringValue != nil else { return "deviceName: must be a string" }
        if let d = s["deviceId"], d.stringValue == nil { return "deviceId: must be a string when present" }
        switch s["clientId"] {
        case nil, .null?, .string?: break
        default: return "clientId: must be a string or null when present"
        }
        if let r = s["recordId"], !(r.stringValue.map(ContractUUID.isValid) ?? false) { return uuidProblem("recordId") }
        return nil
    }

    // MARK: Shared

    /// A JSON number without a fraction, as an Int (JSON Schema's `integer`).
    public static func integer(_ v: JSONValue?) -> Int? {
        switch v {
        case let .int(i)?: return i
        case let .double(d)? where d == d.rounded() && abs(d) < 1e15: return Int(d)
        default: return nil
        }
    }

    private static func uuidProblem(_ key: String) -> String { "\(key): must be a UUID string (8-4-4-4-12 hex)" }

    private static func nonEmptyString(_ v: JSONValue?) -> Bool {
        guard case let .string(s)? = v else { return false }
        return !s.isEmpty
    }

    /// `client_id` of a record or workout: present, and a non-empty string or null.
    private static func clientProblem(_ v: JSONValue?) -> String? {
        switch v {
        case .null?: return nil
        case let .string(s)? where !s.isEmpty: return nil
        default: return "client_id: must be a non-empty string or null"
        }
    }

    /// The first required key missing, else the first unknown one (by name, so the answer
    /// does not depend on the order the keys came in).
    private static func keysProblem(_ members: [(String, JSONValue)], allowed: Set<String>, required: [String],
                                    unknown: String) -> String? {
        let keys = Set(members.map(\.0))
        if let missing = required.sorted().first(where: { !keys.contains($0) }) { return "\(missing): required" }
        if let extra = keys.subtracting(allowed).sorted().first { return "\(extra): \(unknown)" }
        return nil
    }
}
