// SPDX-License-Identifier: MIT
import JSON
import WearMetrics

extension WearMetrics {
    /// A record from a parsed `JSONValue`, keeping the order of `metrics` and `meta`.
    ///
    /// Kept only for SyncTests (`MetricsRequestTests`), which still parse a request body
    /// with the JSON module; it goes with that module. Everything else reads records with
    /// `JSONDecoder` (`WearMetrics: Decodable`).
    public init(json value: JSONValue) throws(WearMetricsDecodingError) {
        guard case let .object(members) = value else { throw WearMetricsDecodingError(field: "(document)", reason: "not an object") }
        var timestamp: UTCTimestamp?, deviceID: String?, source: String?
        var metrics = KeyValueList<Double>(), meta = KeyValueList<String>()
        var rr: [Double]?
        for (key, v) in members {
            switch key {
            case "timestamp":
                guard let s = v.stringValue, let t = UTCTimestamp(iso8601: s) else {
                    throw WearMetricsDecodingError(field: key, reason: "must be an ISO 8601 UTC date-time string")
                }
                timestamp = t
            case "device_id":
                guard let s = v.stringValue else { throw WearMetricsDecodingError(field: key, reason: "must be a string") }
                deviceID = s
            case "source":
                guard let s = v.stringValue else { throw WearMetricsDecodingError(field: key, reason: "must be a string") }
                source = s
            case "metrics":
                guard case let .object(entries) = v else { throw WearMetricsDecodingError(field: key, reason: "must be an object") }
                for (k, x) in entries {
                    guard let d = x.doubleValue else { throw WearMetricsDecodingError(field: "metrics.\(k)", reason: "must be a number") }
                    metrics[k] = d
                }
            case "meta":
                guard case let .object(entries) = v else { throw WearMetricsDecodingError(field: key, reason: "must be an object") }
                for (k, x) in entries {
                    switch x {
                    case let .string(s): meta[k] = s
                    case .int, .double: meta[k] = WearMetrics.numberText(x.doubleValue ?? 0)
                    case let .bool(b): meta[k] = b ? "true" : "false"
                    default: throw WearMetricsDecodingError(field: "meta.\(k)", reason: "must be a string or a number")
                    }
                }
            case "rr_ms":
                guard case let .array(items) = v else { throw WearMetricsDecodingError(field: key, reason: "must be an array of numbers") }
                var list: [Double] = []
                for x in items {
                    guard let d = x.doubleValue else { throw WearMetricsDecodingError(field: key, reason: "must be an array of numbers") }
                    list.append(d)
                }
                rr = list
            default:
                throw WearMetricsDecodingError(field: key, reason: "unknown top-level key (the v1.0 schema allows no others)")
            }
        }
        guard let timestamp else { throw WearMetricsDecodingError(field: "timestamp", reason: "missing") }
        guard let deviceID else { throw WearMetricsDecodingError(field: "device_id", reason: "missing") }
        guard let source else { throw WearMetricsDecodingError(field: "source", reason: "missing") }
        self.init(timestamp: timestamp, deviceID: deviceID, source: source, metrics: metrics, meta: meta, rrIntervals: rr)
    }
}
