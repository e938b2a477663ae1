// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Any JSON value, read by `parse`: what both backends read an untrusted item
/// into, so the contract's checks can say which field is wrong and how, where a typed
/// `Decodable` could only say that decoding failed.
///
/// A number without a fraction is `.int` (`2700.0` too, as JSON Schema counts integers),
/// any other number `.double`, as is an integer beyond 2^53, which a Double cannot hold.
/// Objects are unordered: `text` writes their keys sorted, so the same value always gives
/// the same text.
public enum ContractValue: Sendable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([ContractValue])
    case object([String: ContractValue])

    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, guess: .any)
    }

    /// What a value most likely is, tried first. `JSONDecoder` can only be asked "is this a
    /// String?" by decoding one, and every wrong guess throws an error it builds with its
    /// coding path: decoding a batch of records without guesses took 43 µs a record; with
    /// the contract's shapes as guesses (a valid item then needs no wrong one), decoding and
    /// checking it took 25 µs. A guess changes only the speed, never the value: a wrong one
    /// falls back to every type in turn.
    public indirect enum Guess: Sendable {
        case any
        case string
        case number
        /// A string, number or boolean (a record's `meta`).
        case scalar
        /// An object: the guess for each known member, and for any other.
        case object([String: Guess], other: Guess)
        case array(Guess)
    }

    public init(from decoder: any Decoder, guess: Guess) throws {
        switch guess {
        case .any:
            break
        case .string, .number, .scalar:
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null; return }
            if case .number = guess {
                if let d = try? c.decode(Double.self) { self = Self.number(d); return }
            } else if let s = try? c.decode(String.self) {
                self = .string(s)
                return
            }
        case let .object(members, other):
            if let c = try? decoder.container(keyedBy: AnyKey.self) {
                self = .object(try Self.members(of: c, members, other: other))
                return
            }
        case let .array(element):
            if var u = try? decoder.unkeyedContainer() {
                self = .array(try Self.elements(of: &u, element))
                return
            }
        }
        // Every type in turn, the most common first; containers, the rarest, last.
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let d = try? c.decode(Double.self) {
            self = Self.number(d)
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let o = try? decoder.container(keyedBy: AnyKey.self) {
            self = .object(try Self.members(of: o, [:], other: .any))
        } else if var u = try? decoder.unkeyedContainer() {
            self = .array(try Self.elements(of: &u, .any))
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a JSON value (a number out of range, a bad escape?)")
        }
    }

    /// A number as read (a Double): `.int` when it has no fraction and a Double holds it
    /// exactly (below 2^53), so every path reads the same text as the same value.
    static func number(_ d: Double) -> ContractValue {
        d == d.rounded(.towardZero) && abs(d) < 9_007_199_254_740_992 ? .int(Int(d)) : .double(d)
    }

    /// Members are read straight from the container when the guess is right (a nested
    /// decoder per value would cost more than the value), else through a decoder of their own.
    private static func members(of c: KeyedDecodingContainer<AnyKey>, _ guesses: [String: Guess],
                                other: Guess) throws -> [String: ContractValue] {
        var out: [String: ContractValue] = [:]
        out.reserveCapacity(c.allKeys.count)
        for key in c.allKeys where out[key.stringValue] == nil {
            out[key.stringValue] = try member(c, key, guesses[key.stringValue] ?? other)
        }
        return out
    }

    private static func member(_ c: KeyedDecodingContainer<AnyKey>, _ key: AnyKey, _ guess: Guess) throws -> ContractValue {
        switch guess {
        case .any:
            break
        case .string, .number, .scalar:
            if (try? c.decodeNil(forKey: key)) == true { return .null }
            if case .number = guess {
                if let d = try? c.decode(Double.self, forKey: key) { return number(d) }
            } else if let s = try? c.decode(String.self, forKey: key) {
                return .string(s)
            }
        case let .object(members, other):
            if let n = try? c.nestedContainer(keyedBy: AnyKey.self, forKey: key) { return .object(try Self.members(of: n, members, other: other)) }
        case let .array(element):
            if var u = try? c.nestedUnkeyedContainer(forKey: key) { return .array(try elements(of: &u, element)) }
        }
        return try ContractValue(from: c.superDecoder(forKey: key), guess: .any)
    }

    /// Numbers and strings straight from the container, as members are. This relies on
    /// `JSONDecoder`'s containers staying on an element whose decode failed (the tests
    /// check it: a wrong guess in an array leaves the other elements as they are).
    private static func elements(of u: inout any UnkeyedDecodingContainer, _ guess: Guess) throws -> [ContractValue] {
        var out: [ContractValue] = []
        out.reserveCapacity(u.count ?? 0)
        while !u.isAtEnd {
            switch guess {
            case .number:
                if let d = try? u.decode(Double.self) {
                    out.append(number(d))
                    continue
                }
            case .string:
                if let s = try? u.decode(String.self) {
                    out.append(.string(s))
                    continue
                }
            default:
                break
            }
            out.append(try ContractValue(from: u.superDecoder(), guess: guess))
        }
        return out
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case let .bool(b): try c.encode(b)
        case let .int(i): try c.encode(i)
        // JSON has no NaN or infinity; a decoded value never holds one.
        case let .double(d): if d.isFinite { try c.encode(d) } else { try c.encodeNil() }
        case let .string(s): try c.encode(s)
        case let .array(a): try c.encode(a)
        case let .object(o): try c.encode(o)
        }
    }

    /// A member of an object; nil for a missing key or when this is not an object.
    public subscript(key: String) -> ContractValue? {
        if case let .object(o) = self { return o[key] }
        return nil
    }

    public var string: String? {
        if case let .string(s) = self { return s }
        return nil
    }

    /// Any JSON number.
    public var number: Double? {
        switch self {
        case let .int(i): Double(i)
        case let .double(d): d
        default: nil
        }
    }

    /// A number without a fraction (JSON Schema's `integer`), as an Int.
    public var integer: Int? {
        switch self {
        case let .int(i): i
        case let .double(d) where d == d.rounded() && abs(d) < 1e15: Int(d)
        default: nil
        }
    }

    public var bool: Bool? {
        if case let .bool(b) = self { return b }
        return nil
    }

    public var array: [ContractValue]? {
        if case let .array(a) = self { return a }
        return nil
    }

    public var object: [String: ContractValue]? {
        if case let .object(o) = self { return o }
        return nil
    }

    /// One JSON document: plain JSON through `ContractJSONReader`, anything it gives up on
    /// through `JSONDecoder` (`decoded`), which gives the same value or the error. `guess`
    /// (the shape the caller expects) only makes the decoder faster.
    public static func parse(_ data: Data, guess: Guess = .any) throws -> ContractValue {
        if let v = ContractJSONReader.value(data) { return v }
        return try decoded(data, guess: guess)
    }

    public static func parse(_ bytes: [UInt8], guess: Guess = .any) throws -> ContractValue {
        if let v = ContractJSONReader.value(bytes) { return v }
        return try decoded(Data(bytes), guess: guess)
    }

    public static func parse(_ text: String, guess: Guess = .any) throws -> ContractValue {
        if let v = ContractJSONReader.value(text) { return v }
        return try decoded(Data(text.utf8), guess: guess)
    }

    /// One JSON document through `JSONDecoder` alone: `parse`'s fallback, and what the
    /// tests and the benchmark hold `ContractJSONReader` to.
    package static func decoded(_ data: Data, guess: Guess = .any) throws -> ContractValue {
        let decoder = JSONDecoder()
        decoder.userInfo[Guessed.key] = guess
        return try decoder.decode(Guessed.self, from: data).value
    }

    /// The document with the guess `parse` was given.
    private struct Guessed: Decodable {
        static let key = CodingUserInfoKey(rawValue: "ContractValue.Guess")!
        var value: ContractValue

        init(from decoder: any Decoder) throws {
            value = try ContractValue(from: decoder, guess: decoder.userInfo[Self.key] as? Guess ?? .any)
        }
    }

    /// Compact JSON, keys sorted: stable text for stored bodies, files and diffs.
    public var text: String { String(decoding: Self.encoded(self), as: UTF8.self) }

    public var description: String { text }

    /// `value` as compact JSON with sorted keys and unescaped slashes, as both backends write
    /// their answers. Every value here is encodable, so this does not fail for them.
    public static func encoded(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("null".utf8)
    }
}

extension ContractValue: Equatable {
    /// Numbers compare by value, so `.int(2)` made by hand equals `.double(2)`.
    public static func == (a: ContractValue, b: ContractValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x == y
        case (.int, _), (.double, _): a.number != nil && a.number == b.number
        default: false
        }
    }
}
