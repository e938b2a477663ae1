// SPDX-License-Identifier: MIT
import JSON

/// How `meta.battery` is typed: the Synheart Swift model keeps `meta` as strings
/// (`"0.82"`), the JSON schema types it as a number (`0.82`). Agree with the consumer.
public enum BatteryEncoding: Sendable, Equatable {
    case string
    case number
}

public struct WearMetricsEncodingOptions: Sendable, Equatable {
    public var battery: BatteryEncoding
    public var pretty: Bool

    public init(battery: BatteryEncoding = .string, pretty: Bool = false) {
        self.battery = battery
        self.pretty = pretty
    }
}

extension WearMetrics {
    /// The record as Synheart v1.0 JSON. Written by hand (no JSONEncoder, no ICU):
    /// keys in schema order, numbers in shortest round-trip form, never NaN/inf.
    public func jsonString(options: WearMetricsEncodingOptions = WearMetricsEncodingOptions()) -> String {
        guard !options.pretty else { return json(options: options).serialized(pretty: true) }
        var out: [UInt8] = []
        appendJSON(to: &out, options: options)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the UTF-8 bytes of `jsonString(options:)` (`pretty` aside: always the
    /// compact text) to `out`, without building a `String`: the sync engine writes every
    /// record of a batch through here into one buffer.
    public func appendJSON(to out: inout [UInt8], options: WearMetricsEncodingOptions = WearMetricsEncodingOptions()) {
        out.reserveCapacity(out.count + 160 + 24 * (metrics.count + meta.count) + 14 * (rrIntervals?.count ?? 0))
        out.append(contentsOf: #"{"timestamp":""#.utf8)
        timestamp.appendISO8601(to: &out)
        out.append(contentsOf: #"","device_id":"#.utf8)
        JSONValue.writeString(deviceID, to: &out)
        out.append(contentsOf: #","source":"#.utf8)
        JSONValue.writeString(source, to: &out)
        out.append(contentsOf: #","metrics":{"#.utf8)
        for (i, e) in metrics.entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.writeString(e.key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONValue.writeNumber(e.value, to: &out)
        }
        out.append(contentsOf: #"},"meta":{"#.utf8)
        for (i, e) in meta.entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.writeString(e.key, to: &out)
            out.append(UInt8(ascii: ":"))
            if options.battery == .number, e.key == "battery", let v = Double(e.value), v.isFinite {
                out.append(contentsOf: e.value.utf8)
            } else {
                JSONValue.writeString(e.value, to: &out)
            }
        }
        out.append(UInt8(ascii: "}"))
        if let rr = rrIntervals {
            out.append(contentsOf: #","rr_ms":["#.utf8)
            for (i, v) in rr.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeNumber(v, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The record as a JSON value (for pretty printing and tests).
    public func json(options: WearMetricsEncodingOptions = WearMetricsEncodingOptions()) -> JSONValue {
        var top: [(String, JSONValue)] = [
            ("timestamp", .string(timestamp.iso8601)),
            ("device_id", .string(deviceID)),
            ("source", .string(source)),
            ("metrics", .object(metrics.entries.map { ($0.key, .double($0.value)) })),
            ("meta", .object(meta.entries.map { e in
                if e.key == "battery", options.battery == .number, let v = Double(e.value), v.isFinite { return (e.key, .double(v)) }
                return (e.key, .string(e.value))
            })),
        ]
        if let rr = rrIntervals { top.append(("rr_ms", .array(rr.map { .double($0) }))) }
        return .object(top)
    }
}
