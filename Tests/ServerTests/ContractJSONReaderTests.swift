// SPDX-License-Identifier: MIT
import BackendContract
import Foundation
import Testing
import Timing

/// `ContractJSONReader`, `ContractValue.parse`'s fast path, held to `JSONDecoder` (the
/// `decoded` path): for every input it either gives up or gives the decoder's value to the
/// bit, and `parse` throws exactly when the decoder does.
@Suite("ContractJSONReader")
struct ContractJSONReaderTests {
    /// Same case, same Int, same Double bits, same string bytes, same keys: stricter than
    /// `==`, which lets `.int(2)` equal `.double(2)` and compares strings by canonical equivalence.
    static func identical(_ a: ContractValue, _ b: ContractValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x.bitPattern == y.bitPattern
        case let (.string(x), .string(y)): return x.utf8.elementsEqual(y.utf8)
        case let (.array(x), .array(y)): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case let (.object(x), .object(y)):
            func keys(_ o: [String: ContractValue]) -> [[UInt8]] {
                o.keys.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
            }
            guard x.count == y.count, keys(x) == keys(y) else { return false }
            return x.allSatisfy { k, v in y[k].map { identical(v, $0) } ?? false }
        default: return false
        }
    }

    enum Outcome { case gaveUp, agreed, disagreed(String) }

    /// The differential check of one input; records an issue when the paths disagree.
    @discardableResult
    static func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
        let shown = String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription
        let decoder = Result { try ContractValue.decoded(Data(bytes)) }
        let fast = ContractJSONReader.value(bytes)
        // Every overload's fast path reads the same bytes the same way.
        let fastData = ContractJSONReader.value(Data(bytes))
        #expect((fast == nil) == (fastData == nil) && (fast.map { v in fastData.map { identical(v, $0) } ?? false } ?? true),
                "Data and [UInt8] differ: \(shown)", sourceLocation: sourceLocation)
        if let text = String(validating: bytes, as: UTF8.self) {
            let fastText = ContractJSONReader.value(text)
            #expect((fast == nil) == (fastText == nil) && (fast.map { v in fastText.map { identical(v, $0) } ?? false } ?? true),
                    "String and [UInt8] differ: \(shown)", sourceLocation: sourceLocation)
        }
        // `parse` as a whole throws exactly when the decoder does, and gives its value.
        for whole in [Result { try ContractValue.parse(bytes) }, Result { try ContractValue.parse(Data(bytes)) }] {
            switch (whole, decoder) {
            case let (.success(v), .success(d)):
                #expect(identical(v, d), "parse gave \(v) where JSONDecoder gives \(d): \(shown)", sourceLocation: sourceLocation)
            case (.failure, .failure): break
            case let (.success(v), .failure(e)):
                Issue.record("parse gave \(v) where JSONDecoder throws \(e): \(shown)", sourceLocation: sourceLocation)
            case let (.failure(e), .success(d)):
                Issue.record("parse threw \(e) where JSONDecoder gives \(d): \(shown)", sourceLocation: sourceLocation)
            }
        }
        guard let fast else { return .gaveUp }
        switch decoder {
        case let .success(d) where identical(fast, d): return .agreed
        case let .success(d):
            Issue.record("fast path gave \(fast) where JSONDecoder gives \(d): \(shown)", sourceLocation: sourceLocation)
            return .disagreed("\(fast) vs \(d)")
        case let .failure(e):
            Issue.record("fast path gave \(fast) where JSONDecoder throws \(e): \(shown)", sourceLocation: sourceLocation)
            return .disagreed("\(e)")
        }
    }

    @discardableResult
    static func check(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
        check(Array(text.utf8), sourceLocation: sourceLocation)
    }

    /// A record as `blegate run` sends it (WearMetrics' `appendJSON`), and the test backend's examples.
    static let typical = [
        #"{"id":"6f1c1f3e-2b8a-4f57-9a3c-0d2e5b7c9a11","client_id":"c-1","timestamp":"2026-01-02T03:04:05.678Z","device_id":"A0:9E:1A:10:0A:E2","source":"ble_hrm","metrics":{"hr":72},"meta":{"sensor_contact":true,"rr_count":2,"battery":"0.82","body_sensor_location":"chest"},"rr_ms":[791.015625,1042.96875]}"#,
        #"{"records":[{"id":"6f1c1f3e-2b8a-4f57-9a3c-0d2e5b7c9a11","client_id":null,"timestamp":"2026-01-02T03:04:05.678Z","device_id":"A0:9E:1A:10:0A:E2","source":"ble_hrm","metrics":{"hr":72},"meta":{"sensor_contact":true,"rr_count":2,"battery":82,"body_sensor_location":"chest"},"rr_ms":[791.015625,1042.96875]},{"id":"6f1c1f3e-2b8a-4f57-9a3c-0d2e5b7c9a12","client_id":"c-2","timestamp":"2026-01-02T03:04:06Z","device_id":"A0:9E:1A:10:0A:E3","source":"ble_hrm","metrics":{"hr":121.5,"rmssd":41.5},"meta":{},"rr_ms":[]}]}"#,
        ContractExamples.record().text,
        "{\n  \"gateway_id\" : \"gym-1\",\n  \"records\" : [ ]\n}\n",
    ]

    @Test("a typical record and batch take the fast path, with the decoder's value")
    func typicalRecords() {
        for text in Self.typical {
            guard case .agreed = Self.check(text) else {
                Issue.record("fast path gave up on \(text)")
                continue
            }
        }
    }

    /// Values the fast path reads itself, each with the value it must give (and the decoder gives).
    @Test("numbers, escapes and text as JSONDecoder reads them", arguments: [
        ("-0", ContractValue.int(0)), ("0", .int(0)), ("-0.0", .int(0)), ("0e-400", .int(0)), ("1E2", .int(100)),
        ("1e+2", .int(100)), ("2700.0", .int(2700)), ("2700.5", .double(2700.5)), ("0.1", .double(0.1)),
        ("9007199254740991", .int(9_007_199_254_740_991)), ("-9007199254740991", .int(-9_007_199_254_740_991)),
        ("9007199254740992", .double(9_007_199_254_740_992)), ("9007199254740993", .double(9_007_199_254_740_992)),
        ("12345678901234567890", .double(1.2345678901234567e19)), ("1e300", .double(1e300)),
        ("4.9e-324", .double(.leastNonzeroMagnitude)), ("2.2250738585072011e-308", .double(Double.leastNormalMagnitude.nextDown)),
        ("1.7976931348623157e308", .double(1.7976931348623157e308)), ("0.30000000000000004", .double(0.30000000000000004)),
        ("123456789012345678901234567890e-10", .double(1.2345678901234567890e19)),
        (#""a\"b\\c\/d\be\ff\ng\rh\ti""#, .string("a\"b\\c/d\u{08}e\u{0C}f\ng\rh\ti")),
        (#""é😀\n中""#, .string("é😀\n中")), ("\"e\u{301}\"", .string("e\u{301}")),
        (" \t\r\n[ 1 , true , false , null , \"\" , { } , [ ] ] \n", .array([.int(1), .bool(true), .bool(false), .null, .string(""), .object([:]), .array([])])),
        ("\"\u{7F}\u{2028}\"", .string("\u{7F}\u{2028}")),
    ])
    func values(_ text: String, _ expected: ContractValue) {
        let fast = ContractJSONReader.value(text)
        #expect(fast.map { Self.identical($0, expected) } == true, "\(text): \(String(describing: fast))")
        guard case .agreed = Self.check(text) else {
            Issue.record("not read by the fast path, or not as the decoder reads it: \(text)")
            return
        }
    }

    /// What the fast path leaves to JSONDecoder: the decoder's answer stands, value or error.
    @Test("the fast path gives up on what is unusual", arguments: [
        // \u escapes, surrogates included; escapes JSON has not.
        #""\u0041""#, #""\ud83d\ude00""#, #""\ud800""#, #""\u0000""#, #"{"a\u0062":1}"#, #""\x41""#, #""\'""#, #""\"#, #""\u12""#,
        // A key twice, also as Swift compares strings (é precomposed and decomposed).
        #"{"a":1,"a":2}"#, #"{"a":1,"b":{"c":1,"c":1}}"#, "{\"\u{E9}\":1,\"e\u{301}\":2}",
        // Too deep for the fast path (the decoder reads it).
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
        String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65),
        // Numbers JSON forbids, and ones a Double cannot hold.
        "01", "-01", "00", "+1", ".5", "1.", "-", "-.5", "1e", "1e+", "1.e5", "0x10", "1_000", "NaN", "Infinity", "-Infinity",
        "1e400", "-1e400", "1e-400", "-1e-400", "2e-324", "1" + String(repeating: "0", count: 400), "1e999999999999999999999",
        "[1e400]", #"{"a":1e-400}"#,
        // Syntax errors, trailing content, empty input.
        "", " ", "\n", "{", "}", "[", "]", "[1,]", "[,1]", "[1 2]", #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, #"{"a":}"#, #"{1:2}"#,
        #"{"a":1}}"#, "[1]]", "1 2", "{} x", "nul", "tru", "truex", "nulll", "True", "'a'", #""abc"#, "[\"a\"", "//c\n1", "/*c*/1",
        "\u{FEFF}1", "1\u{00}", "\u{0B}1", "\u{0C}1", "1\u{A0}",
        // Control characters in strings.
        "\"a\nb\"", "\"a\tb\"", "\"\u{00}\"", "\"\u{1F}\"",
    ])
    func givesUp(_ text: String) {
        #expect(ContractJSONReader.value(text) == nil, "\(text.debugDescription)")
        Self.check(text)
    }

    @Test("invalid UTF-8 in a string or a key makes the fast path give up")
    func invalidUTF8() {
        let cases: [[UInt8]] = [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],   // a surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE2, 0x82, 0x22],
            Array(#"{"a":""#.utf8) + [0xC3] + Array(#"\n"}"#.utf8), Array(#"{""#.utf8) + [0xFE] + Array(#"":1}"#.utf8),
            [0xEF, 0xBB, 0xBF] + Array("[1]".utf8), [0x00, 0x31], [0x31, 0x00], [0x7B, 0x00, 0x7D, 0x00],
            [0xFF, 0xFE, 0x31, 0x00],
        ]
        for bytes in cases {
            #expect(ContractJSONReader.value(bytes) == nil, "\(bytes)")
            Self.check(bytes)
        }
    }

    /// Random documents, clean (nothing the fast path gives up on: it must read every one)
    /// and with the unusual mixed in, each also broken by a random edit.
    @Test("random documents: the fast path gives the decoder's value or gives up")
    func random() {
        let rng = SeededRandom(seed: 0x6A73_6F6E)
        var read = 0, gaveUp = 0
        for n in 0..<3_000 {
            let clean = n % 2 == 0
            var g = DocumentGenerator(rng: rng.derived("document", n), clean: clean)
            let text = g.document()
            switch Self.check(text) {
            case .agreed: read += 1
            case .gaveUp:
                gaveUp += 1
                if clean { Issue.record("fast path gave up on a clean document: \(text)") }
            case .disagreed: break
            }
            // A random edit: a byte removed, doubled, replaced by a JSON character, or
            // the document cut short.
            var bytes = Array(text.utf8)
            guard !bytes.isEmpty else { continue }
            let at = g.rng.int(0...(bytes.count - 1))
            switch g.rng.int(0...3) {
            case 0: bytes.remove(at: at)
            case 1: bytes.insert(bytes[at], at: at)
            case 2: bytes[at] = g.rng.pick(Array("{}[]\",:.-+eE0123456789tfn \\".utf8) + [0x80, 0xC3, 0x00, 0x0A])
            default: bytes.removeLast(g.rng.int(1...bytes.count))
            }
            Self.check(bytes)
        }
        #expect(read > 1_500, "the fast path read \(read) documents, gave up on \(gaveUp)")
        #expect(gaveUp > 100, "the unusual documents should make it give up now and then: \(gaveUp)")
    }

    /// Where the reader's exact path (Clinger's: a mantissa to 2^53, a power of ten to 10^22)
    /// meets `Double(String)`'s: each number as the decoder reads it, to the bit.
    @Test("random numbers around the exact path's limits")
    func numbers() {
        var rng = SeededRandom(seed: 0x6E75_6D62)
        var read = 0
        for _ in 0..<5_000 {
            let digits = String(rng.int(1...9)) + String((0..<rng.int(0...17)).map { _ in Character(String(rng.int(0...9))) })
            let point = rng.int(0...digits.count)
            var text = rng.chance(0.5) ? "-" : ""
            text += point == 0 ? "0." + digits : point == digits.count ? digits : digits.prefix(point) + "." + digits.dropFirst(point)
            if rng.chance(0.8) { text += "e" + String(rng.int(-30...30)) }
            if case .agreed = Self.check(text) { read += 1 }
        }
        #expect(read == 5_000, "the fast path read \(read) of 5,000 numbers")
    }

    /// A 200-record batch as the server takes it: read by the fast path, as the decoder reads it
    /// with the contract's guesses.
    @Test("a batch of records, with the contract's guesses")
    func batch() throws {
        let records = (0..<200).map { _ in ContractExamples.record().text }
        let body = #"{"records":["# + records.joined(separator: ",") + "]}"
        let fast = try #require(ContractJSONReader.value(body))
        let decoded = try ContractValue.decoded(Data(body.utf8), guess: .gatewayRequest)
        #expect(Self.identical(fast, decoded))
        #expect(fast["records"]?.array?.count == 200)
    }
}

/// Random JSON text. Clean documents hold nothing the fast path gives up on (no `\u`, keys
/// distinct as Swift compares them, numbers a Double holds); the others may hold any of it.
struct DocumentGenerator {
    var rng: SeededRandom
    let clean: Bool

    mutating func document() -> String {
        space() + value(depth: 0) + space()
    }

    mutating func space() -> String {
        guard rng.chance(0.3) else { return "" }
        return String((0..<rng.int(1...3)).map { _ in rng.pick([" ", "\t", "\n", "\r"]) as Character })
    }

    mutating func value(depth: Int) -> String {
        let roll = rng.int(0...(depth > 4 ? 5 : 7))
        switch roll {
        case 0: return "null"
        case 1: return rng.chance(0.5) ? "true" : "false"
        case 2, 3: return number()
        case 4, 5: return "\"" + string() + "\""
        case 6:
            let items = (0..<rng.int(0...5)).map { _ in space() + value(depth: depth + 1) + space() }
            return "[" + items.joined(separator: ",") + "]"
        default:
            var keys: [String] = [], raw: [String] = []
            for _ in 0..<rng.int(0...6) {
                let k = string()
                if clean, keys.contains(Self.unescaped(k)) { continue }
                keys.append(Self.unescaped(k))
                raw.append(k)
            }
            if !clean, let k = raw.first, rng.chance(0.1) { raw.append(k) }
            let members = raw.map { space() + "\"" + $0 + "\"" + space() + ":" + space() + value(depth: depth + 1) + space() }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    /// The text between the quotes.
    mutating func string() -> String {
        var pieces: [String] = []
        let pool = ["a", "b", "id", "hr", "Z", "0", " ", "é", "e\u{301}", "\u{E9}", "中", "😀", "\u{7F}", "\u{2028}", "ß",
                    "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]
        for _ in 0..<rng.int(0...6) { pieces.append(rng.pick(pool)) }
        if !clean, rng.chance(0.15) { pieces.append(rng.pick(["\\u0041", "\\u00e9", "\\ud83d\\ude00", "\\u0000", "\\ud800"])) }
        return pieces.joined()
    }

    /// What a key the generator wrote reads as, to keep a clean object's keys distinct.
    static func unescaped(_ k: String) -> String {
        var s = k
        for (e, c) in [("\\\"", "\""), ("\\/", "/"), ("\\b", "\u{08}"), ("\\f", "\u{0C}"), ("\\n", "\n"), ("\\r", "\r"), ("\\t", "\t")] {
            s = s.replacingOccurrences(of: e, with: c)
        }
        return s.replacingOccurrences(of: "\\\\", with: "\\")
    }

    mutating func number() -> String {
        func digits(_ n: Int) -> String { String((0..<n).map { _ in Character(String(rng.int(0...9))) }) }
        var s = rng.chance(0.3) ? "-" : ""
        switch rng.int(0...5) {
        case 0: s += "0"
        case 1: s += String(rng.int(1...9)) + digits(rng.int(0...3))
        case 2: s += String(rng.int(1...9)) + digits(rng.int(10...17))   // around 2^53
        case 3: s += String(rng.int(1...9)) + digits(rng.int(18...40))   // beyond 2^63
        default: s += String(rng.int(1...9)) + digits(rng.int(0...6))
        }
        if rng.chance(0.5) { s += "." + digits(rng.int(1...(rng.chance(0.2) ? 30 : 6))) }
        if rng.chance(0.4) {
            s += rng.pick(["e", "E"]) + rng.pick(["", "+", "-"])
            // Clean: a value a Double holds (no overflow, no underflow to zero).
            s += String(clean ? rng.int(0...250) : rng.pick([rng.int(0...30), rng.int(280...340), rng.int(300...400)]))
        }
        return s
    }
}
