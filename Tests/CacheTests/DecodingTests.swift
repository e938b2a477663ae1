// SPDX-License-Identifier: MIT
import Foundation
import GATT
import Testing
import WearMetrics

@Suite("Reading records back from JSON")
struct DecodingTests {
    @Test("encode → decode gives the record back (metrics and meta in key order), both battery encodings")
    func roundTrip() throws {
        var r = hrRecord("AA:BB:CC:DD:EE:FF", 3)
        r.meta["battery"] = "0.82"
        r.meta["name"] = "Polar \"H10\" \u{1F493}\n"
        r.setMetric("energy_expended_kj", 1.0e-8)
        for battery in [BatteryEncoding.string, .number] {
            let text = r.jsonString(options: WearMetricsEncodingOptions(battery: battery))
            let back = try decodeRecord(text)
            #expect(back == keyOrdered(r))
            #expect(back.jsonString() == keyOrdered(r).jsonString())
        }
        let noRR = WearMetrics(timestamp: base, deviceID: "x", source: "ble_device")
        #expect(try decodeRecord(noRR.jsonString()) == noRR)
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
            try decodeRecord(text)
        } throws: { e in
            // Text that is not JSON at all is JSONDecoder's own error.
            (e as? WearMetricsDecodingError)?.field == field || (field == "(document)" && e is DecodingError)
        }
    }
}
