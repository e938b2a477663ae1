// SPDX-License-Identifier: MIT
import JSON

/// A JSON text that is not a WearMetrics v1.0 record, naming the field at fault.
public struct WearMetricsDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "not a WearMetrics record: \(field): \(reason)" }
}

extension WearMetrics {
    /// Reads back what `jsonString()` wrote (either battery encoding). Key order of
    /// `metrics` and `meta` is kept, so a stored record re-encodes to the same text.
    public init(jsonString text: String) throws(WearMetricsDecodingError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw WearMetricsDecodingError(field: "(document)", reason: error.description)
        }
        try self.init(json: value)
    }

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
                metrics.reserveCapacity(entries.count)
                for (k, x) in entries {
                    guard let d = x.doubleValue else { throw WearMetricsDecodingError(field: "metrics.\(k)", reason: "must be a number") }
                    metrics[k] = d
                }
            case "meta":
                guard case let .object(entries) = v else { throw WearMetricsDecodingError(field: key, reason: "must be an object") }
                meta.reserveCapacity(entries.count)
                for (k, x) in entries {
                    switch x {
                    case let .string(s): meta[k] = s
                    case .int, .double:
                        var s = ""
                        JSONValue.writeNumber(x.doubleValue ?? 0, to: &s)
                        meta[k] = s
                    case let .bool(b): meta[k] = b ? "true" : "false"
                    default: throw WearMetricsDecodingError(field: "meta.\(k)", reason: "must be a string or a number")
                    }
                }
            case "rr_ms":
                guard case let .array(items) = v else { throw WearMetricsDecodingError(field: key, reason: "must be an array of numbers") }
                var list: [Double] = []
                list.reserveCapacity(items.count)
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
