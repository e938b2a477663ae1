// SPDX-License-Identifier: MIT
@testable import Cache
import Testing
import Timing
import WearMetrics

/// Records whose JSON text and stored form are pinned below: a strap's heart-rate record
/// with Device Information, the gateway's other kinds, and odd values.
enum RecordTextFixtures {
    static let base = UTCTimestamp(millisecondsSince1970: 1_767_238_262_123)

    static func record(_ id: String, _ source: String, at t: UTCTimestamp = base, metrics: [(String, Double)] = [],
                       meta: [(String, String)] = [], rr: [Double]? = nil) -> WearMetrics {
        WearMetrics(timestamp: t, deviceID: id, source: source, metrics: KeyValueList(metrics), meta: KeyValueList(meta), rrIntervals: rr)
    }

    static let deviceInformation: [(String, String)] = [
        ("manufacturer_name", "Polar Electro Oy"), ("model_number", "H10"), ("serial_number", "3291288939"),
        ("firmware_version", "3.1.1"), ("hardware_version", "00760690.03"), ("software_version", "3.1.1"),
        ("body_sensor_location", "chest"),
    ]

    static let records: [WearMetrics] = [
        // A strap's heart-rate record as the normalizer makes it.
        record("A0:9E:1A:6C:16:FD", "ble_hrm", metrics: [("hr", 72)],
               meta: [("sensor_contact", "detected"), ("rr_count", "2")] + deviceInformation + [("battery", "0.74")],
               rr: [833.0078125, 836.9140625]),
        // An empty rr_ms, no meta, no metrics.
        record("A0:9E:1A:6C:16:FE", "ble_hrm", metrics: [("hr", 0)], meta: [("sensor_contact", "unsupported"), ("hr_status", "no_reading")], rr: []),
        record("C9:26:9C:F6:16:4F", "ble_device", meta: [("battery", "0.67")]),
        record("C9:26:9C:F6:16:50", "custom"),
        // HRV, energy, advertisement.
        record("ED:B1:90:69:3A:AD", "ble_hrm", metrics: [("hr", 64), ("rmssd_ms", 41.25), ("energy_expended_kj", 1234)],
               meta: [("hrv_window_s", "60"), ("hrv_nn_count", "71"), ("hrv_artifact_pct", "1.4"), ("hr_source", "rr"),
                      ("device_timestamp", "123456")]),
        record("ED:B1:90:69:3A:AE", "ble_hrm", metrics: [("hr", 151.5)], meta: [("hr_source", "advertisement"), ("sensor_contact", "detected")]),
        // Numbers: large, tiny, negative, integral at and beyond 2^53, negative zero.
        record("11:22:33:44:55:66", "ble_ftms", metrics: [
            ("a", 1e300), ("b", Double("-1.5e-308")!), ("c", 9_007_199_254_740_992), ("d", 9_007_199_254_740_991), ("e", -9_007_199_254_740_991),
            ("f", -0.0), ("g", 123_456_789_012), ("h", 0.1), ("i", 1e-8), ("j", .greatestFiniteMagnitude),
            ("k", .leastNonzeroMagnitude), ("l", -2.2222222222222223), ("m", 98.6), ("n", 4.5e15), ("o", 1e16),
            ("nan", .nan), ("inf", .infinity),
        ], rr: [0, 1, 1999.0234375, 1e-3]),
        // Unicode and escapes in names, ids and keys; piece text inside values.
        record("Zoë ❤️ 心拍 \u{1F3C3}", "ble_hrm", metrics: [("hr", 88), ("ü_count", 3)], meta: [
            ("manufacturer_name", "Pölar \"chest\" strap\n\u{1}device\",\"ble_"), ("model_number", "\\\"},\"meta\":{"),
            ("name", "tab\there\r\u{1F}\u{7F}"), ("window_s", "detected_pct"), ("x", "unsupporteddevicechest"),
        ], rr: [700]),
        // Times: the epoch, before it, far ahead.
        record("AA:00:00:00:00:01", "ble_rsc", at: UTCTimestamp(millisecondsSince1970: 0), metrics: [("speed_mps", 2.5)]),
        record("AA:00:00:00:00:02", "ble_rsc", at: UTCTimestamp(millisecondsSince1970: -1), metrics: [("cadence_spm", 170)]),
        record("AA:00:00:00:00:03", "ble_hts", at: UTCTimestamp(millisecondsSince1970: 253_402_300_799_999), metrics: [("temperature_c", 36.6)]),
        record("", "", meta: [("", "")]),
    ]
}

extension RecordTextFixtures {
    /// Each record's JSON text, and the compact text (hex) caches stored before the typed
    /// columns: what the migration to them reads.
    static let stored: [(json: String, compactHex: String)] = [
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"A0:9E:1A:6C:16:FD","source":"ble_hrm","metrics":{"hr":72},"meta":{"sensor_contact":"detected","rr_count":"2","manufacturer_name":"Polar Electro Oy","model_number":"H10","serial_number":"3291288939","firmware_version":"3.1.1","hardware_version":"00760690.03","software_version":"3.1.1","body_sensor_location":"chest","battery":"0.74"},"rr_ms":[833.0078125,836.9140625]}"##, "010232362d30312d30315430333a33313a30322e3132330341303a39453a31413a36433a31363a46440468726d0507373206081409320a506f6c617220456c656374726f204f790b4831300c333239313238383933390d332e312e310e30303736303639302e30330f332e312e311018222c1122302e3734123833332e303037383132352c3833362e393134303632355d7d"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"A0:9E:1A:6C:16:FE","source":"ble_hrm","metrics":{"hr":0},"meta":{"sensor_contact":"unsupported","hr_status":"no_reading"},"rr_ms":[]}"##, "010232362d30312d30315430333a33313a30322e3132330341303a39453a31413a36433a31363a46450468726d0507300608151668725f737461747573223a226e6f5f72656164696e67125d7d"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"C9:26:9C:F6:16:4F","source":"ble_device","metrics":{},"meta":{"battery":"0.67"}}"##, "010232362d30312d30315430333a33313a30322e3132330343393a32363a39433a46363a31363a3446041e05061122302e363717"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"C9:26:9C:F6:16:50","source":"custom","metrics":{},"meta":{}}"##, "010232362d30312d30315430333a33313a30322e3132330343393a32363a39433a46363a31363a353016736f75726365223a22637573746f6d05067d7d"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"ED:B1:90:69:3A:AD","source":"ble_hrm","metrics":{"hr":64,"rmssd_ms":41.25,"energy_expended_kj":1234},"meta":{"hrv_window_s":"60","hrv_nn_count":"71","hrv_artifact_pct":"1.4","hr_source":"rr","device_timestamp":"123456"}}"##, "010232362d30312d30315430333a33313a30322e3132330345443a42313a39303a36393a33413a41440468726d050736342c22726d7373645f6d73223a34312e32352c1f3132333406226872765f193630136e6e1a37311361727469666163741d312e34222c1c7272222c1b31323334353617"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"ED:B1:90:69:3A:AE","source":"ble_hrm","metrics":{"hr":151.5},"meta":{"hr_source":"advertisement","sensor_contact":"detected"}}"##, "010232362d30312d30315430333a33313a30322e3132330345443a42313a39303a36393a33413a41450468726d05073135312e35061c6164766572746973656d656e74222c081417"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"11:22:33:44:55:66","source":"ble_ftms","metrics":{"a":1e+300,"b":-1.5e-308,"c":9007199254740992.0,"d":9007199254740991,"e":-9007199254740991,"f":0,"g":123456789012,"h":0.1,"i":1e-08,"j":1.7976931348623157e+308,"k":5e-324,"l":-2.2222222222222223,"m":98.6,"n":4500000000000000,"o":1e+16},"meta":{},"rr_ms":[0,1,1999.0234375,0.001]}"##, "010232362d30312d30315430333a33313a30322e3132330331313a32323a33333a34343a35353a36360466746d73052261223a31652b3330302c2262223a2d312e35652d3330382c2263223a393030373139393235343734303939322e302c2264223a393030373139393235343734303939312c2265223a2d393030373139393235343734303939312c2266223a302c2267223a3132333435363738393031322c2268223a302e312c2269223a31652d30382c226a223a312e37393736393331333438363233313537652b3330382c226b223a35652d3332342c226c223a2d322e323232323232323232323232323232332c226d223a39382e362c226e223a343530303030303030303030303030302c226f223a31652b3136067d2c2272725f6d73223a5b302c312c313939392e303233343337352c302e3030315d7d"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"Zoë ❤️ 心拍 🏃","source":"ble_hrm","metrics":{"hr":88,"ü_count":3},"meta":{"manufacturer_name":"Pölar \"chest\" strap\n\u0001device\",\"ble_","model_number":"\\\"},\"meta\":{","name":"tab\there\r\u001f\##u{7F}","window_s":"detected_pct","x":"unsupporteddevicechest"},"rr_ms":[700]}"##, "010232362d30312d30315430333a33313a30322e313233035a6fc3ab20e29da4efb88f20e5bf83e68b8d20f09f8f830468726d050738382c22c3bc5f636f756e74223a3306226d616e7566616374757265725f6e616d65223a2250c3b66c6172205c22185c222073747261705c6e5c75303030311e5c222c5c22626c655f0b5c5c5c227d2c5c226d6574615c223a7b166e616d65223a227461625c74686572655c725c75303031667f1619145f7063741678223a22151e18123730305d7d"),
        (##"{"timestamp":"1970-01-01T00:00:00.000Z","device_id":"AA:00:00:00:00:01","source":"ble_rsc","metrics":{"speed_mps":2.5},"meta":{}}"##, "017b2274696d657374616d70223a22313937302d30312d30315430303a30303a30302e3030300341413a30303a30303a30303a30303a303104727363052273706565645f6d7073223a322e35067d7d"),
        (##"{"timestamp":"1969-12-31T23:59:59.999Z","device_id":"AA:00:00:00:00:02","source":"ble_rsc","metrics":{"cadence_spm":170},"meta":{}}"##, "017b2274696d657374616d70223a22313936392d31322d33315432333a35393a35392e3939390341413a30303a30303a30303a30303a3032047273630522636164656e63655f73706d223a313730067d7d"),
        (##"{"timestamp":"9999-12-31T23:59:59.999Z","device_id":"AA:00:00:00:00:03","source":"ble_hts","metrics":{"temperature_c":36.6},"meta":{}}"##, "017b2274696d657374616d70223a22393939392d31322d33315432333a35393a35392e3939390341413a30303a30303a30303a30303a303304687473052274656d70657261747572655f63223a33362e36067d7d"),
        (##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"","source":"","metrics":{},"meta":{"":""}}"##, "010232362d30312d30315430333a33313a30322e3132330316736f75726365223a22050622223a2217"),
    ]

    /// Each record's JSON text with `meta.battery` as a number.
    static let batteryAsNumber: [String] = [
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"A0:9E:1A:6C:16:FD","source":"ble_hrm","metrics":{"hr":72},"meta":{"sensor_contact":"detected","rr_count":"2","manufacturer_name":"Polar Electro Oy","model_number":"H10","serial_number":"3291288939","firmware_version":"3.1.1","hardware_version":"00760690.03","software_version":"3.1.1","body_sensor_location":"chest","battery":0.74},"rr_ms":[833.0078125,836.9140625]}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"A0:9E:1A:6C:16:FE","source":"ble_hrm","metrics":{"hr":0},"meta":{"sensor_contact":"unsupported","hr_status":"no_reading"},"rr_ms":[]}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"C9:26:9C:F6:16:4F","source":"ble_device","metrics":{},"meta":{"battery":0.67}}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"C9:26:9C:F6:16:50","source":"custom","metrics":{},"meta":{}}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"ED:B1:90:69:3A:AD","source":"ble_hrm","metrics":{"hr":64,"rmssd_ms":41.25,"energy_expended_kj":1234},"meta":{"hrv_window_s":"60","hrv_nn_count":"71","hrv_artifact_pct":"1.4","hr_source":"rr","device_timestamp":"123456"}}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"ED:B1:90:69:3A:AE","source":"ble_hrm","metrics":{"hr":151.5},"meta":{"hr_source":"advertisement","sensor_contact":"detected"}}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"11:22:33:44:55:66","source":"ble_ftms","metrics":{"a":1e+300,"b":-1.5e-308,"c":9007199254740992.0,"d":9007199254740991,"e":-9007199254740991,"f":0,"g":123456789012,"h":0.1,"i":1e-08,"j":1.7976931348623157e+308,"k":5e-324,"l":-2.2222222222222223,"m":98.6,"n":4500000000000000,"o":1e+16},"meta":{},"rr_ms":[0,1,1999.0234375,0.001]}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"Zoë ❤️ 心拍 🏃","source":"ble_hrm","metrics":{"hr":88,"ü_count":3},"meta":{"manufacturer_name":"Pölar \"chest\" strap\n\u0001device\",\"ble_","model_number":"\\\"},\"meta\":{","name":"tab\there\r\u001f\##u{7F}","window_s":"detected_pct","x":"unsupporteddevicechest"},"rr_ms":[700]}"##,
        ##"{"timestamp":"1970-01-01T00:00:00.000Z","device_id":"AA:00:00:00:00:01","source":"ble_rsc","metrics":{"speed_mps":2.5},"meta":{}}"##,
        ##"{"timestamp":"1969-12-31T23:59:59.999Z","device_id":"AA:00:00:00:00:02","source":"ble_rsc","metrics":{"cadence_spm":170},"meta":{}}"##,
        ##"{"timestamp":"9999-12-31T23:59:59.999Z","device_id":"AA:00:00:00:00:03","source":"ble_hts","metrics":{"temperature_c":36.6},"meta":{}}"##,
        ##"{"timestamp":"2026-01-01T03:31:02.123Z","device_id":"","source":"","metrics":{},"meta":{"":""}}"##,
    ]
}

/// The JSON text of records and their stored forms: pinned, so neither the writer nor the
/// columns can drift from what the cache has stored and its readers expect.
@Suite("Record text")
struct RecordTextTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test("every record's JSON text is the pinned text, as a String and as bytes, and decodes back to the record")
    func jsonText() throws {
        #expect(RecordTextFixtures.records.count == RecordTextFixtures.stored.count)
        for (r, expected) in zip(RecordTextFixtures.records, RecordTextFixtures.stored) {
            #expect(r.jsonString() == expected.json)
            var bytes: [UInt8] = [0x7B]
            r.appendJSON(to: &bytes)
            #expect(bytes == [0x7B] + Array(expected.json.utf8), "appends after what the buffer holds")
            #expect(try decodeRecord(expected.json) == keyOrdered(r), "read back with metrics and meta in key order")
        }
        for (r, expected) in zip(RecordTextFixtures.records, RecordTextFixtures.batteryAsNumber) {
            #expect(r.jsonString(options: WearMetricsEncodingOptions(battery: .number)) == expected)
        }
    }

    @Test("every record's stored form as caches before the typed columns wrote it (compact text) reads back as its JSON text")
    func legacyStoredForm() throws {
        for (json, compactHex) in RecordTextFixtures.stored {
            var bytes: [UInt8] = []
            var i = compactHex.startIndex
            while i < compactHex.endIndex {
                let j = compactHex.index(i, offsetBy: 2)
                bytes.append(try #require(UInt8(compactHex[i..<j], radix: 16)))
                i = j
            }
            #expect(LegacyPayload.expand(bytes) == Array(json.utf8))
            // Plain JSON, as the first caches stored it, reads as it is.
            #expect(LegacyPayload.expand(Array(json.utf8)) == Array(json.utf8))
        }
        // A byte below 0x20 that no piece stands for: corrupted.
        #expect(LegacyPayload.expand([0x01, 0x7B, 0x00, 0x7D]) == nil)
    }

    @Test("every record reads back from its typed columns, and from its sealed fields, as the same record and JSON text")
    func typedRoundTrip() throws {
        for r in RecordTextFixtures.records {
            let start = RecordFields.deviceStart(r.meta)
            let deviceInfo = try RecordFields.decodeDeviceInfo(RecordFields.encodeDeviceInfo(r.meta.entries[start...]))
            let source = SourceKind.code(r.source)
            let fields = RecordFields(r, deviceStart: start)
            let back = try fields.record(timestamp: r.timestamp, deviceID: r.deviceID, source: source, deviceInfo: deviceInfo)
            #expect(back == r)
            #expect(back.jsonString() == r.jsonString())
            let sealed = try RecordFields.record(body: RecordFields.body(r, deviceStart: start), timestamp: r.timestamp,
                                                 deviceID: r.deviceID, source: source, deviceInfo: deviceInfo)
            #expect(sealed == r)
            #expect(sealed.jsonString() == r.jsonString())
        }
    }

    @Test("a strap's heart-rate record takes typed columns only: the pinned values, no extra bytes")
    func strapColumns() {
        let r = RecordTextFixtures.records[0]
        let start = RecordFields.deviceStart(r.meta)
        #expect(start == 2, "sensor_contact and rr_count are the record's; the rest is the device's")
        var expected = RecordFields()
        expected.hr = 72
        expected.contact = 3
        expected.rrCount = 2
        // 853 and 857 ticks of 1/1024 s, little-endian.
        expected.rr = [0x55, 0x03, 0x59, 0x03]
        #expect(RecordFields(r, deviceStart: start) == expected)
        // Device facts as meta items (2) with one-byte keys (21: manufacturer_name).
        #expect(Self.hex(RecordFields.encodeDeviceInfo(r.meta.entries[start...])).hasPrefix("0215"))
        // An HRV record as the normalizer makes it: columns only, its method and context as items.
        var hrv = WearMetrics(timestamp: RecordTextFixtures.base, deviceID: "A0:9E:1A:6C:16:FD", source: "ble_hrm")
        for (k, v) in [("hrv_rmssd", 41.25), ("hrv_mean_rr_ms", 812.5), ("hrv_mean_hr_bpm", 73.8), ("hrv_sdnn", 52.1),
                       ("hrv_pnn50_pct", 12.5), ("hrv_sd1_ms", 29.2), ("hrv_sd2_ms", 66.0)] { hrv.setMetric(k, v) }
        for (k, v) in [("hrv_window_s", "60"), ("hrv_nn_count", "71"), ("hrv_artifact_pct", "0.0"), ("hrv_sdnn_window_s", "300"),
                       ("hrv_sdnn_nn_count", "360"), ("hrv_sdnn_artifact_pct", "1.4"), ("hrv_method", "rmssd_sdnn_v1"), ("hrv_context", "rest")] {
            hrv.meta[k] = v
        }
        let fields = RecordFields(hrv, deviceStart: RecordFields.deviceStart(hrv.meta))
        #expect(fields.rmssd == 41.25 && fields.sd2 == 66 && fields.hrvWindow == 60 && fields.hrvArtifact == 0 && fields.sdnnNNCount == 360)
        // Item 2 (meta), key 31 (hrv_method), "rmssd_sdnn_v1"; item 2, key 32 (hrv_context), "rest".
        #expect(Self.hex(fields.extra ?? []) == "021f0d726d7373645f73646e6e5f763102200472657374")
    }

    @Test("RR intervals: the strap's 1/1024 s counts as two bytes each; any other value as a float, exactly")
    func rrPacking() {
        #expect(RRPacking.pack([833.0078125, 836.9140625]) == [0x55, 0x03, 0x59, 0x03])
        #expect(RRPacking.unpack([0x55, 0x03, 0x59, 0x03]) == [833.0078125, 836.9140625])
        for list in [[], [0.0, 1, 1999.0234375, 1e-3], [800.0], [-0.0], [63_999.0234375], [64_000]] as [[Double]] {
            let packed = RRPacking.pack(list)
            #expect(RRPacking.unpack(packed).map { $0.map(\.bitPattern) } == list.map(\.bitPattern), "\(list)")
        }
        #expect(RRPacking.pack([]).count == 1, "an empty list is not an empty BLOB (which binds as NULL)")
        #expect(RRPacking.unpack([0x02]) == nil)
    }

    @Test("record ids are lowercase 8-4-4-4-12 hex of their 128 bits, minted in increasing order")
    func recordIDs() {
        func text(_ hi: UInt64, _ lo: UInt64) -> String {
            var out: [UInt8] = []
            RecordID.format(hi, lo, appendingTo: &out)
            return String(decoding: out, as: UTF8.self)
        }
        #expect(text(0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210) == "01234567-89ab-cdef-fedc-ba9876543210")
        #expect(text(0, .max) == "00000000-0000-0000-ffff-ffffffffffff")
        var maker = RecordID.Maker()
        var rng = SeededRandom(seed: 7)
        var ids: [UInt8] = []
        for t in [1_767_238_262_123, 1_767_238_262_123, 1_767_238_262_122, 1_767_238_262_124] as [Int64] {
            maker.next(atMilliseconds: t, using: &rng, appendingTo: &ids)
        }
        #expect(ids.count == 4 * RecordID.length)
        let texts = (0..<4).map { String(decoding: ids[($0 * 36)..<(($0 + 1) * 36)], as: UTF8.self) }
        #expect(texts == texts.sorted() && Set(texts).count == 4)
        #expect(texts.allSatisfy { $0.hasPrefix("019b779b-") && Array($0.utf8)[14] == UInt8(ascii: "7") })

        // The writer's generator: fresh random numbers across several refills.
        var system = BufferedSystemRandom()
        let draws = (0..<100).map { _ in system.next() }
        #expect(Set(draws).count == 100)
    }
}
