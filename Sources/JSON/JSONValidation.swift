// SPDX-License-Identifier: MIT

extension JSONValue {
    /// Checks that `text` is one JSON object (RFC 8259) without building it: no values,
    /// strings or numbers are made, so text that is only passed on (a stored record spliced
    /// into a batch) can be checked for the price of one pass over its bytes.
    public static func validateObject(_ text: String) throws(JSONParseError) {
        var text = text
        let failure = text.withUTF8 { bytes -> JSONParseError? in
            var s = JSONScanner(bytes: bytes)
            s.skipSpace()
            guard s.index < bytes.count, bytes[s.index] == UInt8(ascii: "{") else { return s.error("expected an object") }
            do throws(JSONParseError) {
                try s.value(depth: 0)
            } catch {
                return error
            }
            s.skipSpace()
            return s.index == bytes.count ? nil : s.error("unexpected content after the value")
        }
        if let failure { throw failure }
    }
}

/// The grammar of `JSONByteParser`, skipping instead of building.
private struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func error(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    mutating func literal(_ text: StaticString) throws(JSONParseError) {
        let n = text.utf8CodeUnitCount
        guard index + n <= bytes.count else { throw error("truncated literal") }
        for i in 0..<n where bytes[index + i] != text.utf8Start[i] { throw error("invalid literal") }
        index += n
    }

    mutating func value(depth: Int) throws(JSONParseError) {
        guard depth < 64 else { throw error("nested deeper than 64 levels") }
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                try string()
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipSpace()
                try value(depth: depth + 1)
                skipSpace()
                guard index < bytes.count else { throw error("unterminated object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return }
                throw error("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return }
            while true {
                skipSpace()
                try value(depth: depth + 1)
                skipSpace()
                guard index < bytes.count else { throw error("unterminated array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return }
                throw error("expected ',' or ']'")
            }
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try number()
        }
    }

    mutating func digits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        return index - start
    }

    mutating func number() throws(JSONParseError) {
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let first = index
        let n = digits()
        guard n > 0 else { throw error("expected a value") }
        if bytes[first] == 0x30, n > 1 { throw error("leading zero in a number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("expected digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw error("expected digits in the exponent") }
        }
    }

    mutating func string() throws(JSONParseError) {
        index += 1   // opening quote
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let c = bytes[index]
            index += 1
            if c == UInt8(ascii: "\"") { return }
            if c < 0x20 { index -= 1; throw error("control character in a string") }
            guard c == UInt8(ascii: "\\") else { continue }
            guard index < bytes.count else { throw error("unterminated escape") }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                 UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                continue
            case UInt8(ascii: "u"):
                guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
                for _ in 0..<4 {
                    switch bytes[index] {
                    case 0x30...0x39, 0x41...0x46, 0x61...0x66: index += 1
                    default: throw error("invalid hex digit in \\u escape")
                    }
                }
            default:
                throw error("invalid escape")
            }
        }
    }
}
