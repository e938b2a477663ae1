// SPDX-License-Identifier: MIT

#if canImport(Glibc)
// Only for libm (sqrt, round) to be linked into executables that import no other C module.
import Glibc
#endif

/// A minimal JSON value with a deterministic writer.
///
/// Hand-written instead of `JSONEncoder` so the library targets need no Foundation,
/// object keys keep the order the decoder chose (field-table order reads naturally),
/// and non-finite numbers can never be emitted: they are written as `null`.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Member lookup for tests and callers that want one field.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.first(where: { $0.0 == key })?.1
    }

    public var doubleValue: Double? {
        switch self {
        case let .double(d): d
        case let .int(i): Double(i)
        default: nil
        }
    }

    public var stringValue: String? {
        if case let .string(s) = self { return s }
        return nil
    }

    /// Compact (`pretty == false`) or two-space indented JSON text.
    public func serialized(pretty: Bool = false) -> String {
        var out = ""
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    public func write(to out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .int(i): out += String(i)
        case let .double(d): JSONValue.writeNumber(d, to: &out)
        case let .string(s): JSONValue.writeString(s, to: &out)
        case let .array(items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                item.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case let .object(members):
            if members.isEmpty { out += "{}"; return }
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                JSONValue.writeString(key, to: &out)
                out += pretty ? ": " : ":"
                value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    /// Shortest round-trip form; integral values below 2^53 print without `.0`;
    /// NaN and infinities become `null` (JSON cannot carry them).
    public static func writeNumber(_ d: Double, to out: inout String) {
        guard d.isFinite else { out += "null"; return }
        if let i = wholeNumber(d) {
            out += String(i)
            return
        }
        out += d.description   // Swift prints e.g. 98.6, 1e-08: both valid JSON
    }

    /// A whole `d` that a double holds exactly (below 2^53), printed as an integer; -0
    /// prints as 0.
    private static func wholeNumber(_ d: Double) -> Int64? {
        d == d.rounded() && abs(d) < 9_007_199_254_740_992 ? Int64(d) : nil
    }

    public static func writeString(_ s: String, to out: inout String) {
        out += "\""
        // Fast path: nothing to escape (device ids, keys, most values) is appended whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += "\\u00"
                    let digits = Array("0123456789abcdef")
                    out.append(digits[Int(scalar.value >> 4)])
                    out.append(digits[Int(scalar.value & 0xF)])
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

extension JSONValue {
    /// `writeNumber` into UTF-8 bytes: the same text, without building a `String`.
    public static func writeNumber(_ d: Double, to out: inout [UInt8]) {
        guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
        if let i = wholeNumber(d) {
            writeInteger(i, to: &out)
            return
        }
        out.append(contentsOf: d.description.utf8)   // at most 24 bytes: a small string, not allocated
    }

    /// Decimal digits of `v`, as `String(v)` prints them.
    public static func writeInteger(_ v: Int64, to out: inout [UInt8]) {
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

    /// `writeString` into UTF-8 bytes: the same text, without building a `String`.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        var s = s
        let plain: Bool = s.withUTF8 { utf8 in
            // Fast path: nothing to escape (device ids, keys, most values) is appended whole.
            guard !utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
            out.append(0x22)
            out.append(contentsOf: utf8)
            out.append(0x22)
            return true
        }
        if plain { return }
        var text = ""
        writeString(s, to: &text)
        out.append(contentsOf: text.utf8)
    }
}

/// Anything the CLI can print as decoded fields.
public protocol JSONRepresentable {
    var json: JSONValue { get }
}
