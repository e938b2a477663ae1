// SPDX-License-Identifier: MIT

/// The contract's checks of workouts and profile metrics (docs/backend-openapi.yaml
/// `Workout`, `ProfileMetric`). A document that fails one is answered in `rejected` with
/// `field: what is wrong`; the rest of the batch is kept.
enum DocumentValidation {
    static let workoutKeys: Set<String> = [
        "id", "client_id", "source", "gateway_id", "device_id", "workout_type", "class_name", "start_time", "end_time",
        "duration_seconds", "calories_active", "distance_meters", "avg_heart_rate", "max_heart_rate", "min_heart_rate",
        "seconds_in_zone", "effort_points", "trimp", "hrv_rmssd_ms", "coverage", "formulas", "source_device",
    ]
    static let optionalWorkoutKeys: Set<String> = ["distance_meters", "hrv_rmssd_ms"]
    static let workoutTypes: Set<String> = ["run", "walk", "cycle", "strength", "hiit", "other"]
    static let profileKeys: Set<String> = ["id", "client_id", "metric", "value", "unit", "measured_at", "source", "device_id"]
    static let units: [String: String] = ["height": "cm", "weight": "kg", "body_fat": "percent"]

    /// nil when the workout is acceptable.
    static func workoutProblem(_ w: JSON) -> String? {
        guard let o = w.object else { return "workout: must be a JSON object" }
        if let problem = common(o, allowed: workoutKeys, optional: optionalWorkoutKeys) { return problem }
        switch o["client_id"] {
        case .null?: break
        case let .string(s)? where !s.isEmpty: break
        default: return "client_id: must be a non-empty string or null"
        }
        for key in ["gateway_id", "device_id", "source_device"] {
            guard let s = o[key]?.string, !s.isEmpty else { return "\(key): must be a non-empty string" }
        }
        guard let type = o["workout_type"]?.string, workoutTypes.contains(type) else {
            return "workout_type: must be one of \(workoutTypes.sorted().joined(separator: ", "))"
        }
        switch o["class_name"] {
        case .null?, .string?: break
        default: return "class_name: must be a string or null"
        }
        for key in ["start_time", "end_time"] {
            guard let t = o[key]?.string, RecordValidation.isTimestamp(t) else { return "\(key): must be an ISO 8601 UTC time" }
        }
        guard let duration = integer(o["duration_seconds"]), duration >= 0 else { return "duration_seconds: must be a non-negative integer" }
        switch o["calories_active"] {
        case .null?: break
        case let .number(n)? where n >= 0: break
        default: return "calories_active: must be a non-negative number or null"
        }
        for key in ["distance_meters", "hrv_rmssd_ms"] where o[key] != nil {
            guard let n = o[key]?.number, n >= 0 else { return "\(key): must be a non-negative number when present" }
        }
        for key in ["avg_heart_rate", "effort_points", "trimp"] {
            guard let n = o[key]?.number, n >= 0 else { return "\(key): must be a non-negative number" }
        }
        for key in ["max_heart_rate", "min_heart_rate"] {
            guard integer(o[key]) != nil else { return "\(key): must be an integer" }
        }
        guard let zones = o["seconds_in_zone"]?.array, zones.count == 6, zones.allSatisfy({ (integer($0) ?? -1) >= 0 }) else {
            return "seconds_in_zone: must be 6 non-negative integers (below zone 1, zones 1 to 5)"
        }
        guard zones.reduce(0, { $0 + (integer($1) ?? 0) }) == duration else { return "seconds_in_zone: must add up to duration_seconds" }
        guard let coverage = o["coverage"]?.number, (0...1).contains(coverage) else { return "coverage: must be a number from 0 to 1" }
        guard let formulas = o["formulas"]?.object, ["zones", "kcal", "points"].allSatisfy({ formulas[$0]?.string != nil }) else {
            return "formulas: must be an object with zones, kcal and points version strings"
        }
        return nil
    }

    /// nil when the profile metric is acceptable.
    static func profileMetricProblem(_ m: JSON) -> String? {
        guard let o = m.object else { return "metric: must be a JSON object" }
        if let problem = common(o, allowed: profileKeys, optional: []) { return problem }
        guard o["client_id"]?.string?.isEmpty == false else { return "client_id: must be a non-empty string" }
        guard let metric = o["metric"]?.string, let unit = units[metric] else { return "metric: must be height, weight or body_fat" }
        guard o["unit"]?.string == unit else { return "unit: must be \(unit) for \(metric)" }
        guard (o["value"]?.number ?? 0) > 0 else { return "value: must be a positive number" }
        guard let t = o["measured_at"]?.string, RecordValidation.isTimestamp(t) else { return "measured_at: must be an ISO 8601 UTC time" }
        guard o["device_id"]?.string?.isEmpty == false else { return "device_id: must be a non-empty string" }
        return nil
    }

    /// id, source, and no missing or unknown keys.
    private static func common(_ o: [String: JSON], allowed: Set<String>, optional: Set<String>) -> String? {
        guard let id = o["id"]?.string, RecordValidation.isUUID(id) else { return "id: must be a UUID string (8-4-4-4-12 hex)" }
        guard o["source"]?.string == "blegate" else { return "source: must be \"blegate\"" }
        if let missing = allowed.subtracting(optional).filter({ o[$0] == nil }).sorted().first { return "\(missing): required" }
        if let extra = o.keys.filter({ !allowed.contains($0) }).sorted().first { return "\(extra): unknown field" }
        return nil
    }

    private static func integer(_ v: JSON?) -> Int? {
        guard let n = v?.number, n == n.rounded(), abs(n) < 1e15 else { return nil }
        return Int(n)
    }
}
