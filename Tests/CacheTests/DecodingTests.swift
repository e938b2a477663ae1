// SPDX-License-Identifier: MIT
import JSON
import GATT
import Testing
import WearMetrics

@Suite("Reading records back from JSON")
struct DecodingTests {
    @Test("encode → decode is the identity, both battery encodings")
    func roundTrip() throws {
        var r = hrRecord("AA:BB:CC:DD:EE:FF", 3)
        r.meta["battery"] = "0.82"
        r.meta["name"] = "Polar \"H10\" \u{1F493}\n"
        r.setMetric("energy_expended_kj", 1.0e-8)
        for battery in [BatteryEncoding.string, .number] {
            let text = r.jsonString(options: WearMetricsEncodingOptions(battery: battery))
            let back = try WearMetrics(jsonString: text)
            #expect(back == r)
            #expect(back.jsonString() == r.jsonString())
        }
        let noRR = WearMetrics(timestamp: base, deviceID: "x", source: "ble_device")
        #expect(try WearMetrics(jsonString: noRR.jsonString()) == noRR)
    }

    @Test("checking a JSON object without building it accepts and refuses what the parser does")
    func validateObject() throws {
        let texts = [
            hrRecord("AA:BB:CC:DD:EE:FF", 3).jsonString(), "{}", " { \"a\" : [1, -2.5e3, true, false, null, {\"b\": \"\\u00e9\\n\"}] } ",
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

    @Test("timestamps: Z, offsets, fractions, bare dates")
    func timestamps() {
        #expect(UTCTimestamp(iso8601: "2026-01-02T03:04:05.678Z")?.millisecondsSince1970 == 1_767_323_045_678)
        #expect(UTCTimestamp(iso8601: "2026-01-02T04:04:05.678+01:00")?.millisecondsSince1970 == 1_767_323_045_678)
        #expect(UTCTimestamp(iso8601: "1969-12-31T23:59:59.999Z")?.millisecondsSince1970 == -1)
        #expect(UTCTimestamp(iso8601: "2000-02-29")?.millisecondsSince1970 == 951_782_400_000)
        #expect(UTCTimestamp(iso8601: "2026-01-02T03:04:05") == nil)
        #expect(UTCTimestamp(iso8601: "2026-13-02T03:04:05Z") == nil)
        #expect(UTCTimestamp(iso8601: "yesterday") == nil)
    }

    @Test("bad records name the field", arguments: [
        (#"{"device_id":"a","source":"s","metrics":{},"meta":{}}"#, "timestamp"),
        (#"{"timestamp":"2026-01-01T00:00:00Z","device_id":"a","source":"s","metrics":{"hr":"x"},"meta":{}}"#, "metrics.hr"),
        (#"{"timestamp":"2026-01-01T00:00:00Z","device_id":"a","source":"s","extra":1}"#, "extra"),
        (#"{"timestamp":"nope","device_id":"a","source":"s"}"#, "timestamp"),
        (#"[1,2]"#, "(document)"),
        (#"{"timestamp":"#, "(document)"),
    ])
    func badRecords(text: String, field: String) {
        #expect {
            try WearMetrics(jsonString: text)
        } throws: { e in
            (e as? WearMetricsDecodingError)?.field == field
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
