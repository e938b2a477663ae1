// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Any JSON value, so the backend can check each record field by field and report exactly
/// which one is wrong, the way a strict production backend would.
public enum JSON: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSON].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSON].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case let .bool(b): try c.encode(b)
        case let .number(n):
            // Integers print without a fraction, as most producers write them.
            if n == n.rounded(), abs(n) < 1e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case let .string(s): try c.encode(s)
        case let .array(a): try c.encode(a)
        case let .object(o): try c.encode(o)
        }
    }

    public subscript(key: String) -> JSON? {
        if case let .object(o) = self { return o[key] }
        return nil
    }

    public var string: String? {
        if case let .string(s) = self { return s }
        return nil
    }

    public var number: Double? {
        if case let .number(n) = self { return n }
        return nil
    }

    public var array: [JSON]? {
        if case let .array(a) = self { return a }
        return nil
    }

    public var object: [String: JSON]? {
        if case let .object(o) = self { return o }
        return nil
    }

    public static func parse(_ bytes: [UInt8]) throws -> JSON {
        try JSONDecoder().decode(JSON.self, from: Data(bytes))
    }

    /// Compact text with sorted keys (stable output for files and diffs).
    public var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a JSON value cannot fail: every case maps to a JSON type.
        return String(decoding: (try? encoder.encode(self)) ?? Data("null".utf8), as: UTF8.self)
    }
}
