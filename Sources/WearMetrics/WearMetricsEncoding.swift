// SPDX-License-Identifier: MIT

/// How `meta.battery` is typed: the Synheart Swift model keeps `meta` as strings
/// (`"0.82"`), the JSON schema types it as a number (`0.82`). Agree with the consumer.
public enum BatteryEncoding: Sendable, Equatable {
    case string
    case number
}

public struct WearMetricsEncodingOptions: Sendable, Equatable {
    public var battery: BatteryEncoding

    public init(battery: BatteryEncoding = .string) {
        self.battery = battery
    }
}

extension WearMetrics {
    /// The record as Synheart v1.0 JSON: `appendJSON`'s text as a `String`.
    public func jsonString(options: WearMetricsEncodingOptions = WearMetricsEncodingOptions()) -> String {
        var out: [UInt8] = []
        appendJSON(to: &out, options: options)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the record's compact JSON as UTF-8 bytes to `out`: the sync engine writes
    /// every record of a batch through here into one buffer, and `blegate stream` every
    /// line. Top-level keys in schema order, `metrics` and `meta` in the record's own order
    /// (which the cache keeps and tests pin), numbers in shortest round-trip form, never
    /// NaN or infinity.
    ///
    /// The one hand-written JSON writer left: for one typical heart-rate record (1 metric,
    /// 4 meta entries, 2 RR intervals, 238 bytes) it takes 0.8 µs where `JSONEncoder` with
    /// `.sortedKeys` on the record's `Encodable` form takes 9 µs, about 12 times as long,
    /// and loses the order of `metrics` and `meta` (`blegate-bench json-encode`, -O, an
    /// x86-64 machine of 2 shared cores); sync writes thousands of records a batch.
    public func appendJSON(to out: inout [UInt8], options: WearMetricsEncodingOptions = WearMetricsEncodingOptions()) {
        out.reserveCapacity(out.count + 160 + 24 * (metrics.count + meta.count) + 14 * (rrIntervals?.count ?? 0))
        out.append(contentsOf: #"{"timestamp":""#.utf8)
        timestamp.appendISO8601(to: &out)
        out.append(contentsOf: #"","device_id":"#.utf8)
        JSONBytes.writeString(deviceID, to: &out)
        out.append(contentsOf: #","source":"#.utf8)
        JSONBytes.writeString(source, to: &out)
        out.append(contentsOf: #","metrics":"#.utf8)
        appendMetricsJSON(to: &out)
        out.append(contentsOf: #","meta":"#.utf8)
        appendMetaJSON(to: &out, options: options)
        if let rr = rrIntervals {
            out.append(contentsOf: #","rr_ms":["#.utf8)
            for (i, v) in rr.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONBytes.writeNumber(v, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The `metrics` object as `appendJSON` writes it (the CSV export's `metrics` column).
    public func appendMetricsJSON(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (i, e) in metrics.entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONBytes.writeString(e.key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONBytes.writeNumber(e.value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The `meta` object as `appendJSON` writes it (the CSV export's `meta` column).
    public func appendMetaJSON(to out: inout [UInt8], options: WearMetricsEncodingOptions = WearMetricsEncodingOptions()) {
        out.append(UInt8(ascii: "{"))
        for (i, e) in meta.entries.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONBytes.writeString(e.key, to: &out)
            out.append(UInt8(ascii: ":"))
            if options.battery == .number, e.key == "battery", let v = Double(e.value), v.isFinite {
                out.append(contentsOf: e.value.utf8)
            } else {
                JSONBytes.writeString(e.value, to: &out)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A metric's value as `appendJSON` writes it: `85`, not `85.0` (the CSV export's columns).
    public static func numberText(_ value: Double) -> String {
        var out: [UInt8] = []
        JSONBytes.writeNumber(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// The record with the keys of the v1.0 schema (`meta.battery` as a string), for
/// `JSONEncoder` where a record is one value among others; the hot paths write through
/// `appendJSON`.
extension WearMetrics: Encodable {
    enum CodingKeys: String, CodingKey {
        case timestamp, deviceID = "device_id", source, metrics, meta, rrIntervals = "rr_ms"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(timestamp.iso8601, forKey: .timestamp)
        try c.encode(deviceID, forKey: .deviceID)
        try c.encode(source, forKey: .source)
        var m = c.nestedContainer(keyedBy: AnyKey.self, forKey: .metrics)
        for e in metrics.entries { try m.encode(e.value, forKey: AnyKey(e.key)) }
        var t = c.nestedContainer(keyedBy: AnyKey.self, forKey: .meta)
        for e in meta.entries { try t.encode(e.value, forKey: AnyKey(e.key)) }
        try c.encodeIfPresent(rrIntervals, forKey: .rrIntervals)
    }
}

/// A coding key named at run time: the keys of `metrics` and `meta`.
struct AnyKey: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

/// JSON strings and numbers as UTF-8 bytes, for `appendJSON` and the request bodies sync
/// builds around its output (`MetricsRequest`, `DocumentRequest`), which only need a few
/// ids quoted: `JSONEncoder` would mean an encoder and a `Data` per id on the hottest path.
public enum JSONBytes {
    /// Shortest round-trip form; whole values below 2^53 without `.0` (and -0 as 0);
    /// NaN and infinities as `null`, which JSON cannot carry otherwise.
    static func writeNumber(_ d: Double, to out: inout [UInt8]) {
        guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
        if d == d.rounded(), abs(d) < 9_007_199_254_740_992 {
            writeInteger(Int64(d), to: &out)
            return
        }
        out.append(contentsOf: d.description.utf8)   // at most 24 bytes: a small string, not allocated
    }

    /// Decimal digits of `v`, as `String(v)` prints them, without making a `String`.
    static func writeInteger(_ v: Int64, to out: inout [UInt8]) {
        var magnitude = v.magnitude
        if v < 0 { out.append(UInt8(ascii: "-")) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 20 digits at most, last digit first
        var n = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[n] = UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30
                magnitude /= 10
                n += 1
            } while magnitude != 0
            while n > 0 {
                n -= 1
                out.append(buffer[n])
            }
        }
    }

    /// A JSON string literal: `"`, `\` and control characters escaped, the rest as is.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        s.withUTF8 { utf8 in
            // Fast path: nothing to escape (device ids, keys, most values) is appended whole.
            guard utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
                out.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                switch byte {
                case 0x22: out.append(contentsOf: #"\""#.utf8)
                case 0x5C: out.append(contentsOf: #"\\"#.utf8)
                case 0x0A: out.append(contentsOf: #"\n"#.utf8)
                case 0x0D: out.append(contentsOf: #"\r"#.utf8)
                case 0x09: out.append(contentsOf: #"\t"#.utf8)
                case ..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: #"\u00"#.utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0xF)])
                default: out.append(byte)
                }
            }
        }
        out.append(0x22)
    }
}
