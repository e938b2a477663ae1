// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ContractValue.parse`'s fast path: plain JSON read from its UTF-8 bytes straight into a
/// `ContractValue`, with no `Decoder` in between.
///
/// Why not `JSONDecoder` alone: at 6,000 records/s decoding took half of blegate-server's
/// CPU (`KeyedDecodingContainer.allKeys` a fifth), where 40,000 records/s on 2 cores leaves
/// the server and PostgreSQL 40 µs a record together. `blegate-bench contract-parse` (a
/// 200-record batch as `blegate run` sends it, release build): JSONDecoder with the
/// contract's guesses 19.6 µs a record, this reader 3.1 µs.
///
/// It gives exactly the value `JSONDecoder` gives, or gives up (nil) and leaves the text
/// to it, which then answers with its value or its error. It gives up on anything unusual:
/// empty input, a syntax error or trailing content, nesting deeper than `maxDepth`, a `\u`
/// escape (surrogates and NUL stay the decoder's business), a control character or invalid
/// UTF-8 in a string, a key twice in an object (as Swift compares strings), a number JSON
/// does not allow (`01`, `+1`, `.5`, `1.`) or one a Double cannot hold (it overflows, or
/// underflows to zero from digits that are not all zero). The other escapes are read.
/// Numbers are read as `JSONDecoder` reads them, a correctly rounded Double (Clinger's
/// exact fast path, else `Double(String)`), then `.int` or `.double` as
/// `ContractValue.number` makes them.
package enum ContractJSONReader {
    /// Deeper nesting than any contract item goes to `JSONDecoder` (which allows 512).
    package static let maxDepth = 64

    package static func value(_ bytes: UnsafeBufferPointer<UInt8>) -> ContractValue? {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard let v = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.i == bytes.count ? v : nil
    }

    package static func value(_ data: Data) -> ContractValue? {
        data.withUnsafeBytes { raw in value(raw.assumingMemoryBound(to: UInt8.self)) }
    }

    package static func value(_ bytes: [UInt8]) -> ContractValue? {
        bytes.withUnsafeBufferPointer { value($0) }
    }

    package static func value(_ text: String) -> ContractValue? {
        var text = text
        return text.withUTF8 { value($0) }
    }

    private struct Reader {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0
        /// A string with escapes, unescaped.
        var scratch: [UInt8] = []

        init(bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

        mutating func skipSpace() {
            while i < b.count {
                switch b[i] {
                case 0x20, 0x09, 0x0A, 0x0D: i += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> ContractValue? {
            guard i < b.count else { return nil }
            switch b[i] {
            case UInt8(ascii: "\""): return string().map(ContractValue.string)
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return nil
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let n = word.utf8CodeUnitCount
            guard b.count - i >= n else { return false }
            let w = word.utf8Start
            for k in 0..<n where b[i + k] != w[k] { return false }
            i += n
            return true
        }

        mutating func object(depth: Int) -> ContractValue? {
            guard depth <= maxDepth else { return nil }
            i += 1
            var out: [String: ContractValue] = [:]
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "}") {
                i += 1
                return .object(out)
            }
            while true {
                guard i < b.count, b[i] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                skipSpace()
                guard let v = value(depth: depth), out.updateValue(v, forKey: key) == nil else { return nil }
                skipSpace()
                guard i < b.count else { return nil }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    skipSpace()
                } else if b[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(out)
                } else {
                    return nil
                }
            }
        }

        mutating func array(depth: Int) -> ContractValue? {
            guard depth <= maxDepth else { return nil }
            i += 1
            var out: [ContractValue] = []
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "]") {
                i += 1
                return .array(out)
            }
            while true {
                guard let v = value(depth: depth) else { return nil }
                out.append(v)
                skipSpace()
                guard i < b.count else { return nil }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    skipSpace()
                } else if b[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(out)
                } else {
                    return nil
                }
            }
        }

        /// At the opening quote.
        mutating func string() -> String? {
            i += 1
            let start = i
            var ascii = true
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") {
                    let text = UnsafeBufferPointer(rebasing: b[start..<i])
                    i += 1
                    return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
                }
                if c == UInt8(ascii: "\\") { return escapedString(from: start) }
                if c < 0x20 { return nil }
                if c >= 0x80 { ascii = false }
                i += 1
            }
            return nil
        }

        /// At the first backslash of the string that starts at `start`. An escape adds one
        /// ASCII byte, which cannot complete or break a UTF-8 sequence: the text is valid
        /// UTF-8 exactly when the bytes between the escapes are.
        mutating func escapedString(from start: Int) -> String? {
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: b[start..<i]))
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") {
                    i += 1
                    return String(validating: scratch, as: UTF8.self)
                }
                if c == UInt8(ascii: "\\") {
                    guard i + 1 < b.count else { return nil }
                    switch b[i + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(b[i + 1])
                    case UInt8(ascii: "b"): scratch.append(0x08)
                    case UInt8(ascii: "f"): scratch.append(0x0C)
                    case UInt8(ascii: "n"): scratch.append(0x0A)
                    case UInt8(ascii: "r"): scratch.append(0x0D)
                    case UInt8(ascii: "t"): scratch.append(0x09)
                    default: return nil   // `\u`, or no escape at all
                    }
                    i += 2
                    continue
                }
                if c < 0x20 { return nil }
                scratch.append(c)
                i += 1
            }
            return nil
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as a correctly rounded Double.
        mutating func number() -> ContractValue? {
            let start = i
            let negative = b[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            // The digits as an integer while it stays at most 2^53, the power of ten to
            // scale it by, and whether any digit is not zero.
            var mantissa: UInt64 = 0
            var exact = true
            var scale = 0
            var nonZero = false
            func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
            func add(_ c: UInt8) {
                let d = UInt64(c - UInt8(ascii: "0"))
                if d != 0 { nonZero = true }
                if exact {
                    mantissa = mantissa * 10 + d
                    if mantissa > 1 << 53 { exact = false }
                }
            }
            guard i < b.count, isDigit(b[i]) else { return nil }
            if b[i] == UInt8(ascii: "0") {
                i += 1
                if i < b.count, isDigit(b[i]) { return nil }
            } else {
                while i < b.count, isDigit(b[i]) {
                    add(b[i])
                    i += 1
                }
            }
            if i < b.count, b[i] == UInt8(ascii: ".") {
                i += 1
                let first = i
                while i < b.count, isDigit(b[i]) {
                    add(b[i])
                    scale -= 1
                    i += 1
                }
                guard i > first else { return nil }
            }
            if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
                i += 1
                var exponentNegative = false
                if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
                    exponentNegative = b[i] == UInt8(ascii: "-")
                    i += 1
                }
                let first = i
                var exponent = 0
                while i < b.count, isDigit(b[i]) {
                    exponent = min(exponent * 10 + Int(b[i] - UInt8(ascii: "0")), 1_000_000)
                    i += 1
                }
                guard i > first else { return nil }
                scale += exponentNegative ? -exponent : exponent
            }
            let d: Double
            if exact, (-22...22).contains(scale) {
                // Both exact in a Double, so one multiplication or division rounds once,
                // correctly (Clinger): the Double strtod gives.
                let m = Double(mantissa)
                let magnitude = scale < 0 ? m / Self.powersOfTen[-scale] : m * Self.powersOfTen[scale]
                d = negative ? -magnitude : magnitude
            } else {
                guard let parsed = Double(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)) else {
                    return nil
                }
                d = parsed
            }
            // JSONDecoder refuses what overflows, and a zero from digits that are not all zero.
            guard d.isFinite, d != 0 || !nonZero else { return nil }
            return ContractValue.number(d)
        }

        static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }
    }
}
