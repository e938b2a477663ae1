// SPDX-License-Identifier: MIT

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

/// A record from its JSON text through `JSONDecoder` (the cache's migration of payloads
/// written before the typed columns, tests).
extension WearMetrics: Decodable {
    /// Reads what `appendJSON` wrote (either battery encoding), refusing anything the v1.0
    /// schema does not allow with a `WearMetricsDecodingError` naming the field. JSON
    /// objects carry no order a `Decoder` reports: `metrics` and `meta` read back in key
    /// order, so a record whose keys were in another order reads back with the same entries
    /// in that order (the cache's typed columns then keep it).
    public init(from decoder: any Decoder) throws {
        let top: KeyedDecodingContainer<AnyKey>
        do {
            top = try decoder.container(keyedBy: AnyKey.self)
        } catch {
            throw WearMetricsDecodingError(field: "(document)", reason: "not an object")
        }
        for key in top.allKeys where CodingKeys(rawValue: key.stringValue) == nil {
            throw WearMetricsDecodingError(field: key.stringValue, reason: "unknown top-level key (the v1.0 schema allows no others)")
        }
        func string(_ name: String) throws -> String {
            guard top.contains(AnyKey(name)) else { throw WearMetricsDecodingError(field: name, reason: "missing") }
            guard let s = try? top.decode(String.self, forKey: AnyKey(name)) else {
                throw WearMetricsDecodingError(field: name, reason: "must be a string")
            }
            return s
        }
        guard let timestamp = UTCTimestamp(iso8601: try string("timestamp")) else {
            throw WearMetricsDecodingError(field: "timestamp", reason: "must be an ISO 8601 UTC date-time string")
        }
        let deviceID = try string("device_id"), source = try string("source")
        var metrics = KeyValueList<Double>(), meta = KeyValueList<String>()
        if top.contains(AnyKey("metrics")) {
            guard let c = try? top.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("metrics")) else {
                throw WearMetricsDecodingError(field: "metrics", reason: "must be an object")
            }
            let keys = c.allKeys.sorted { $0.stringValue < $1.stringValue }
            metrics.reserveCapacity(keys.count)
            for k in keys {
                guard let d = try? c.decode(Double.self, forKey: k) else {
                    throw WearMetricsDecodingError(field: "metrics.\(k.stringValue)", reason: "must be a number")
                }
                metrics.appendNew(k.stringValue, d)
            }
        }
        if top.contains(AnyKey("meta")) {
            guard let c = try? top.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("meta")) else {
                throw WearMetricsDecodingError(field: "meta", reason: "must be an object")
            }
            let keys = c.allKeys.sorted { $0.stringValue < $1.stringValue }
            meta.reserveCapacity(keys.count)
            for k in keys {
                if let s = try? c.decode(String.self, forKey: k) {
                    meta.appendNew(k.stringValue, s)
                } else if let d = try? c.decode(Double.self, forKey: k) {
                    meta.appendNew(k.stringValue, Self.numberText(d))
                } else if let b = try? c.decode(Bool.self, forKey: k) {
                    meta.appendNew(k.stringValue, b ? "true" : "false")
                } else {
                    throw WearMetricsDecodingError(field: "meta.\(k.stringValue)", reason: "must be a string or a number")
                }
            }
        }
        var rr: [Double]?
        if top.contains(AnyKey("rr_ms")) {
            guard let list = try? top.decode([Double].self, forKey: AnyKey("rr_ms")) else {
                throw WearMetricsDecodingError(field: "rr_ms", reason: "must be an array of numbers")
            }
            rr = list
        }
        self.init(timestamp: timestamp, deviceID: deviceID, source: source, metrics: metrics, meta: meta, rrIntervals: rr)
    }
}
