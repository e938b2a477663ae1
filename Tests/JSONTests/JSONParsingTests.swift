// SPDX-License-Identifier: MIT
import JSON
import Testing

/// The JSON module's parser and its check of an object without building it, while Sync
/// and the backends still use them (moved here from CacheTests, which no longer import it).
@Suite("JSON module: parsing")
struct JSONParsingTests {
    @Test("checking a JSON object without building it accepts and refuses what the parser does")
    func validateObject() throws {
        let texts = [
            #"{"timestamp":"2026-01-01T03:31:05.000Z","device_id":"AA:BB:CC:DD:EE:FF","source":"ble_hrm","metrics":{"hr":73},"meta":{}}"#,
            "{}", " { \"a\" : [1, -2.5e3, true, false, null, {\"b\": \"\\u00e9\\n\"}] } ",
            "[1]", "\"s\"", "1", "", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":\"\\x\"}",
            "{\"a\":\"\u{01}\"}", "{\"a\":tru}", "{\"a\":1} x", "{\"a\":\"\\u12G4\"}", "{\"a\" 1}", "{1:2}",
            String(repeating: "{\"a\":", count: 70) + "1" + String(repeating: "}", count: 70),
        ]
        for text in texts {
            var isObject = false
            if case .object = try? JSONValue.parse(text) { isObject = true }
            #expect(((try? JSONValue.validateObject(text)) != nil) == isObject, "\(text)")
        }
    }

    @Test("JSON parser: escapes, surrogate pairs, numbers, errors")
    func parser() throws {
        let v = try JSONValue.parse(#" {"a":[1,-2.5,3e2,true,false,null],"s":"x\"\\\/\n\u00e9\ud83d\udc93"} "#)
        #expect(v["a"] == .array([.int(1), .double(-2.5), .double(300), .bool(true), .bool(false), .null]))
        #expect(v["s"]?.stringValue == "x\"\\/\né\u{1F493}")
        for bad in ["", "{", "[1,]", "01", "\"\\ud800\"", "{\"a\" 1}", "1 2", "tru", "\"\u{01}\""] {
            #expect(throws: JSONParseError.self) { try JSONValue.parse(bad) }
        }
    }
}

/// The module's `Codable` coder (Sync reads the backend's answers with it).
@Suite("JSON module: Codable coder")
struct JSONCoderTests {
    @Test("snake_case names as JSONEncoder's convertToSnakeCase makes them")
    func snakeCase() {
        let names = ["gatewayID": "gateway_id", "oldestPendingAgeSeconds": "oldest_pending_age_seconds", "httpStatus": "http_status",
                     "HTTPStatus": "http_status", "rrDropped": "rr_dropped", "rr2Dropped": "rr2_dropped", "a": "a", "": ""]
        for (name, snake) in names { #expect(JSONValueEncoder.snakeCase(name) == snake, "\(name)") }
    }

    @Test("decoding refuses the wrong types with the field's path, and converts exact numbers")
    func decodingErrors() throws {
        struct Sample: Codable, Equatable {
            var count: Int
            var ratio: Double
            var small: UInt8?
            var tags: [String]
        }
        let d = JSONValueDecoder()
        #expect(try d.decode(Sample.self, from: "{\"count\":3.0,\"ratio\":2,\"tags\":[]}") == Sample(count: 3, ratio: 2, small: nil, tags: []))
        #expect(throws: DecodingError.self) { try d.decode(Sample.self, from: "{\"count\":3.5,\"ratio\":2,\"tags\":[]}") }
        #expect(throws: DecodingError.self) { try d.decode(Sample.self, from: "{\"count\":1,\"ratio\":2,\"small\":300,\"tags\":[]}") }
        #expect(throws: DecodingError.self) { try d.decode(Sample.self, from: "{\"count\":1,\"ratio\":2}") }
        #expect(throws: DecodingError.self) { try d.decode(Sample.self, from: "{\"count\":1,") }
        let value = Sample(count: -4, ratio: 0.1, small: 255, tags: ["a", "b/c"])
        #expect(try d.decode(Sample.self, from: try JSONValueEncoder().encode(value)) == value)
    }
}
