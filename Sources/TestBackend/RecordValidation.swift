// SPDX-License-Identifier: MIT
import Outbox

/// The contract's per-record checks (docs/backend-openapi.yaml `MetricsRecord`). A record
/// that fails one is answered in `rejected` with the reason; the rest of the batch is kept.
enum RecordValidation {
    static let allowedKeys: Set<String> = ["id", "client_id", "timestamp", "device_id", "source", "metrics", "meta", "rr_ms"]

    /// nil when the record is acceptable, else `field: what is wrong`.
    static func problem(_ record: JSON) -> String? {
        guard let o = record.object else { return "record: must be a JSON object" }
        guard let id = o["id"]?.string, isUUID(id) else { return "id: must be a UUID string (8-4-4-4-12 hex)" }
        switch o["client_id"] {
        case nil, .null?: break
        case let .string(s)? where !s.isEmpty: break
        default: return "client_id: must be a non-empty string or null"
        }
        guard let t = o["timestamp"]?.string, isTimestamp(t) else {
            return "timestamp: must be an ISO 8601 UTC time such as 2026-01-02T03:04:05.678Z"
        }
        guard let d = o["device_id"]?.string, !d.isEmpty else { return "device_id: must be a non-empty string" }
        guard let s = o["source"]?.string, !s.isEmpty else { return "source: must be a non-empty string" }
        guard let metrics = o["metrics"]?.object else { return "metrics: must be an object of numbers" }
        for (k, v) in metrics where v.number == nil { return "metrics.\(k): must be a number" }
        guard let meta = o["meta"]?.object else { return "meta: must be an object" }
        for (k, v) in meta {
            switch v {
            case .string, .number, .bool: continue
            default: return "meta.\(k): must be a string, number or boolean"
            }
        }
        if let rr = o["rr_ms"] {
            guard let values = rr.array, values.allSatisfy({ ($0.number ?? -1) > 0 }) else {
                return "rr_ms: must be an array of positive numbers (milliseconds)"
            }
        }
        if let extra = o.keys.filter({ !allowedKeys.contains($0) }).sorted().first {
            return "\(extra): unknown field; extensions belong in metrics or meta"
        }
        return nil
    }

    static func isUUID(_ s: String) -> Bool { ContractUUID.isValid(s) }

    static func isTimestamp(_ s: String) -> Bool { ContractTimestamp.isValid(s) }
}
