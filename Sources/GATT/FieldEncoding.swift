// SPDX-License-Identifier: MIT

/// Writes a decoded characteristic's fields into an `Encoder`, leaving absent optionals
/// out, so each `encode(to:)` lists its fields in table order without `if let` noise.
struct FieldWriter {
    private var container: KeyedEncodingContainer<FieldKey>

    init(_ encoder: any Encoder) {
        container = encoder.container(keyedBy: FieldKey.self)
    }

    mutating func add(_ key: String, _ value: Int?) throws { try container.encodeIfPresent(value, forKey: FieldKey(key)) }
    mutating func add(_ key: String, _ value: Double?) throws { try container.encodeIfPresent(value, forKey: FieldKey(key)) }
    mutating func add(_ key: String, _ value: String?) throws { try container.encodeIfPresent(value, forKey: FieldKey(key)) }
    mutating func add(_ key: String, _ value: Bool?) throws { try container.encodeIfPresent(value, forKey: FieldKey(key)) }
    mutating func add<T: Encodable>(_ key: String, _ value: [T]) throws { try container.encode(value, forKey: FieldKey(key)) }
    mutating func add(_ key: String, _ value: GATTDateTime?) throws { try container.encodeIfPresent(value, forKey: FieldKey(key)) }
    /// A field the device flagged as not available: present, as null.
    mutating func addNull(_ key: String) throws { try container.encodeNil(forKey: FieldKey(key)) }

    /// An IEEE-11073 special value (NaN, NRes, ±INFINITY) is written as null with its
    /// name under `<key>_special`: JSON has no number for it, and the reader should
    /// know why the value is missing.
    mutating func add(_ key: String, _ value: IEEE11073Value?) throws {
        guard let value else { return }
        if let special = value.specialName {
            try addNull(key)
            try add(key + "_special", special)
        } else if let v = value.finite {
            try add(key, v)
        }
    }

    /// `["N trailing byte(s) ignored"]` under `warnings` when `count` > 0.
    mutating func addTrailingBytesWarning(_ count: Int) throws {
        if count > 0 { try add("warnings", ["\(count) trailing byte(s) ignored"]) }
    }
}

/// A field name of a decoded characteristic.
struct FieldKey: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

extension GATTDateTime: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("year", Int(year))
        try o.add("month", Int(month))
        try o.add("day", Int(day))
        try o.add("hours", Int(hours))
        try o.add("minutes", Int(minutes))
        try o.add("seconds", Int(seconds))
        try o.add("iso_local", isoLocal)
    }
}
