// SPDX-License-Identifier: MIT
import JSON

/// Builds an object while skipping absent optionals, so decoders list fields in
/// table order without `if let` noise.
struct JSONObjectBuilder {
    var members: [(String, JSONValue)] = []

    mutating func add(_ key: String, _ value: JSONValue) { members.append((key, value)) }
    mutating func add(_ key: String, _ value: Int?) { if let value { members.append((key, .int(value))) } }
    mutating func add(_ key: String, _ value: Double?) { if let value { members.append((key, .double(value))) } }
    mutating func add(_ key: String, _ value: String?) { if let value { members.append((key, .string(value))) } }
    mutating func add(_ key: String, _ value: Bool?) { if let value { members.append((key, .bool(value))) } }
    mutating func add(_ key: String, _ value: IEEE11073Value?) {
        guard let value else { return }
        if let special = value.specialName {
            members.append((key, .null))
            members.append((key + "_special", .string(special)))
        } else if let v = value.finite {
            members.append((key, .double(v)))
        }
    }

    var object: JSONValue { .object(members) }
}

extension GATTDateTime: JSONRepresentable {
    public var json: JSONValue {
        .object([
            ("year", .int(Int(year))), ("month", .int(Int(month))), ("day", .int(Int(day))),
            ("hours", .int(Int(hours))), ("minutes", .int(Int(minutes))), ("seconds", .int(Int(seconds))),
            ("iso_local", .string(isoLocal)),
        ])
    }
}
