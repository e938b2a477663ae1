// SPDX-License-Identifier: MIT
import JSON
import Outbox

/// The contract's per-item checks (docs/backend-openapi.yaml). An item that fails one is
/// answered in `rejected` with `field: what is wrong`; the rest of the batch is kept. The
/// record rules are the loopback test backend's, so a gateway sees the same answers from both.
enum Validation {
    static let recordKeys: Set<String> = ["id", "client_id", "timestamp", "device_id", "source", "metrics", "meta", "rr_ms"]
    static let workoutTypes: Set<String> = ["run", "walk", "cycle", "strength", "hiit", "other"]
    static let profileMetrics: [String: String] = ["height": "cm", "weight": "kg", "body_fat": "percent"]

    static func members(_ v: JSONValue) -> [(String, JSONValue)]? {
        if case let .object(m) = v { return m }
        return nil
    }

    static func array(_ v: JSONValue?) -> [JSONValue]? {
        if case let .array(a)? = v { return a }
        return nil
    }

    static func recordProblem(_ record: JSONValue) -> String? {
        guard let o = members(record) else { return "record: must be a JSON object" }
        guard let id = record["id"]?.stringValue, isUUID(id) else { return "id: must be a UUID string (8-4-4-4-12 hex)" }
        if let p = clientProblem(record["client_id"]) { return p }
        guard let t = record["timestamp"]?.stringValue, isTimestamp(t) else {
            return "timestamp: must be an ISO 8601 UTC time such as 2026-01-02T03:04:05.678Z"
        }
        guard let d = record["device_id"]?.stringValue, !d.isEmpty else { return "device_id: must be a non-empty string" }
        guard let s = record["source"]?.stringValue, !s.isEmpty else { return "source: must be a non-empty string" }
        guard let metrics = record["metrics"].flatMap(members) else { return "metrics: must be an object of numbers" }
        for (k, v) in metrics where v.doubleValue == nil { return "metrics.\(k): must be a number" }
        guard let meta = record["meta"].flatMap(members) else { return "meta: must be an object" }
        for (k, v) in meta {
            switch v {
            case .string, .int, .double, .bool: continue
            default: return "meta.\(k): must be a string, number or boolean"
            }
        }
        if let rr = record["rr_ms"] {
            guard let values = array(rr), values.allSatisfy({ ($0.doubleValue ?? -1) > 0 }) else {
                return "rr_ms: must be an array of positive numbers (milliseconds)"
            }
        }
        if let extra = o.map(\.0).filter({ !recordKeys.contains($0) }).sorted().first {
            return "\(extra): unknown field; extensions belong in metrics or meta"
        }
        return nil
    }

    static func workoutProblem(_ w: JSONValue) -> String? {
        guard members(w) != nil else { return "workout: must be a JSON object" }
        guard let id = w["id"]?.stringValue, isUUID(id) else { return "id: must be a UUID string (8-4-4-4-12 hex)" }
        if let p = clientProblem(w["client_id"]) { return p }
        guard let d = w["device_id"]?.stringValue, !d.isEmpty else { return "device_id: must be a non-empty string" }
        guard let type = w["workout_type"]?.stringValue, workoutTypes.contains(type) else {
            return "workout_type: must be one of \(workoutTypes.sorted().joined(separator: ", "))"
        }
        switch w["class_name"] {
        case nil, .null?: break
        case let .string(s)? where !s.isEmpty: break
        default: return "class_name: must be a non-empty string or null"
        }
        for key in ["start_time", "end_time"] {
            guard let t = w[key]?.stringValue, isTimestamp(t) else { return "\(key): must be an ISO 8601 UTC time" }
        }
        if w["start_time"]!.stringValue! > w["end_time"]!.stringValue! { return "end_time: before start_time" }
        for key in ["duration_seconds", "avg_heart_rate", "max_heart_rate", "min_heart_rate"] {
            guard let n = w[key]?.doubleValue, n >= 0 else { return "\(key): must be a non-negative number" }
        }
        if let z = w["seconds_in_zone"] {
            guard let a = array(z), a.count == 6, a.allSatisfy({ ($0.doubleValue ?? -1) >= 0 }) else {
                return "seconds_in_zone: must be 6 non-negative numbers"
            }
        }
        return nil
    }

    static func profileMetricProblem(_ m: JSONValue) -> String? {
        guard members(m) != nil else { return "metric: must be a JSON object" }
        guard let id = m["id"]?.stringValue, isUUID(id) else { return "id: must be a UUID string (8-4-4-4-12 hex)" }
        if let p = clientProblem(m["client_id"]) { return p }
        guard let name = m["metric"]?.stringValue, let unit = profileMetrics[name] else {
            return "metric: must be one of body_fat, height, weight"
        }
        guard let value = m["value"]?.doubleValue, value.isFinite, value >= 0 else { return "value: must be a non-negative number" }
        guard m["unit"]?.stringValue == unit else { return "unit: must be \(unit) for \(name)" }
        guard let t = m["measured_at"]?.stringValue, isTimestamp(t) else { return "measured_at: must be an ISO 8601 UTC time" }
        return nil
    }

    private static func clientProblem(_ v: JSONValue?) -> String? {
        switch v {
        case nil, .null?: return nil
        case let .string(s)? where !s.isEmpty: return nil
        default: return "client_id: must be a non-empty string or null"
        }
    }

    static func isUUID(_ s: String) -> Bool { ContractUUID.isValid(s) }

    static func isTimestamp(_ s: String) -> Bool { ContractTimestamp.isValid(s) }
}
