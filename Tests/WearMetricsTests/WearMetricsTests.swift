// SPDX-License-Identifier: MIT
import Foundation
import GATT
import HRV
import Normalization
import Testing
import WearMetrics

func payload(_ hex: String) -> [UInt8] { parseHex(hex)! }

let t0 = UTCTimestamp(millisecondsSince1970: 1_767_238_262_000)   // 2026-01-01T03:31:02.000Z

@Suite("WearMetrics records")
struct WearMetricsTests {
    @Test("ISO-8601 UTC with milliseconds, by hand", arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(1_767_323_045_678), "2026-01-02T03:04:05.678Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
        (Int64(253_402_300_799_999), "9999-12-31T23:59:59.999Z"),
    ])
    func timestamps(ms: Int64, expected: String) {
        #expect(UTCTimestamp(millisecondsSince1970: ms).iso8601 == expected)
    }

    @Test("heart rate record: key mapping and exact JSON")
    func heartRateRecord() throws {
        let m = try HeartRateMeasurement(bytes: payload("1E 55 32 00 21 00"))
        var dm = DeviceMeta()
        dm.absorb(try GATTDecoder.decode(.batteryLevel, bytes: [0x52]))
        dm.absorb(try GATTDecoder.decode(.bodySensorLocation, bytes: [0x01]))
        let r = WearMetricsNormalizer.record(heartRate: m, deviceID: "AA:BB:CC:DD:EE:FF", at: t0, deviceMeta: dm)
        #expect(r.source == "ble_hrm")
        #expect(r[metric: "hr"] == 85)
        #expect(r[metric: "energy_expended_kj"] == 50)
        #expect(r.rrIntervals == [32.2265625])
        #expect(r.jsonString() ==
            #"{"timestamp":"2026-01-01T03:31:02.000Z","device_id":"AA:BB:CC:DD:EE:FF","source":"ble_hrm","metrics":{"hr":85,"energy_expended_kj":50},"meta":{"sensor_contact":"detected","rr_count":"1","battery":"0.82","body_sensor_location":"chest"},"rr_ms":[32.2265625]}"#)
        #expect(r.jsonString(options: WearMetricsEncodingOptions(battery: .number)).contains(#""battery":0.82"#))
    }

    @Test("no contact or HR 0: hr omitted, reason in meta; no RR → no rr_ms key")
    func heartRateOmitted() throws {
        let a = WearMetricsNormalizer.record(heartRate: try HeartRateMeasurement(bytes: payload("04 FF")), deviceID: "d", at: t0)
        #expect(a[metric: "hr"] == nil)
        #expect(a.meta["hr_status"] == "no_contact")
        #expect(a.meta["sensor_contact"] == "not_detected")
        #expect(!a.jsonString().contains("rr_ms"))
        let b = WearMetricsNormalizer.record(heartRate: try HeartRateMeasurement(bytes: payload("00 00")), deviceID: "d", at: t0)
        #expect(b[metric: "hr"] == nil && b.meta["hr_status"] == "no_reading")
    }

    @Test("top-level keys are exactly the schema's")
    func schemaKeys() throws {
        let r = WearMetricsNormalizer.record(heartRate: try HeartRateMeasurement(bytes: payload("10 48 00 04")), deviceID: "d", at: t0)
        #expect(r.jsonString().hasPrefix(#"{"timestamp":"#))
        let written = try JSONSerialization.jsonObject(with: Data(r.jsonString().utf8)) as? NSDictionary
        #expect(Set(written?.allKeys as? [String] ?? []) == ["timestamp", "device_id", "source", "metrics", "meta", "rr_ms"])
        // The Encodable form (JSONEncoder) writes the same members as `appendJSON`, and reads back.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let encoded = try encoder.encode(r)
        #expect(try JSONSerialization.jsonObject(with: encoded) as? NSDictionary == written)
        let back = try JSONDecoder().decode(WearMetrics.self, from: encoded)
        #expect(back.metrics.keys == r.metrics.keys.sorted() && back.meta.keys == r.meta.keys.sorted(), "read back in key order")
        #expect(try JSONSerialization.jsonObject(with: Data(back.jsonString().utf8)) as? NSDictionary == written)
    }

    @Test("NaN and infinity never reach metrics")
    func nonFinite() {
        var r = WearMetrics(timestamp: t0, deviceID: "d", source: "ble_plx")
        r.setMetric("a", .nan)
        r.setMetric("b", .infinity)
        r.setMetric("c", 1.5)
        #expect(r.metrics.keys == ["c"])
        let s = r.jsonString()
        #expect(!s.contains("nan") && !s.contains("inf"))
    }

    @Test("cross trainer record of reference §7.3")
    func crossTrainerRecord() throws {
        var n = WearMetricsNormalizer()
        let d = try GATTDecoder.decode(.crossTrainerData, bytes: payload("8C 29 00 20 03 2C 01 00 5A 00 55 00 32 00 96 00 82 58 02"))
        let rValue = n.normalize(d, deviceID: "AA:BB:CC:DD:EE:FF", at: t0)
        let r = try #require(rValue)
        #expect(r.source == "ble_ftms")
        #expect(r[metric: "speed_mps"] == 8.0 / 3.6)
        #expect(r[metric: "distance_m"] == 300)
        #expect(r[metric: "step_rate_per_min"] == 90)
        #expect(r[metric: "avg_step_rate_per_min"] == 85)
        #expect(r[metric: "resistance_level"] == 5.0)
        #expect(r[metric: "power_w"] == 150)
        #expect(r[metric: "hr"] == 130)
        #expect(r[metric: "elapsed_s"] == 600)
        #expect(r.meta["machine_type"] == "cross_trainer")
        #expect(r.meta["movement_direction"] == "forward")
        #expect(r.meta["ftms_layout"] == "ftms_v1.0")
        #expect(r.meta["hr_source"] == "machine")
        #expect(r.jsonString().contains(#""speed_mps":2.2222222222222223"#))
    }

    @Test("FTMS More Data fragments are merged and emitted on the last one")
    func ftmsFragments() throws {
        var n = WearMetricsNormalizer()
        let first = try GATTDecoder.decode(.rowerData, bytes: payload("05 00 E8 03 00"))
        #expect(n.normalize(first, deviceID: "r", at: t0) == nil)
        let last = try GATTDecoder.decode(.rowerData, bytes: payload("00 00 30 0A 00"))
        let rValue = n.normalize(last, deviceID: "r", at: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + 500))
        let r = try #require(rValue)
        #expect(r[metric: "distance_m"] == 1000)
        #expect(r[metric: "stroke_rate_per_min"] == 24)
        // A stale fragment is not merged.
        _ = n.normalize(first, deviceID: "r", at: t0)
        let lateValue = n.normalize(last, deviceID: "r", at: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + 5000))
        let late = try #require(lateValue)
        #expect(late[metric: "distance_m"] == nil)
    }

    @Test("treadmill: energy N/A omitted, calories kept; v1.0 pace → s/km")
    func treadmill() throws {
        var n = WearMetricsNormalizer()
        let rValue = n.normalize(try GATTDecoder.decode(.treadmillData, bytes: payload("84 04 F4 01 E8 03 00 2D 00 FF FF FF 58 02")), deviceID: "t", at: t0)
        let r = try #require(rValue)
        #expect(r[metric: "calories"] == 45)
        #expect(r[metric: "energy_rate_kcal_per_h"] == nil)
        #expect(r[metric: "speed_mps"] == 5.0 / 3.6)
        let pValue = n.normalize(try GATTDecoder.decode(.treadmillData, bytes: payload("20 00 F4 01 0C")), deviceID: "t", at: t0)
        let p = try #require(pValue)
        #expect(p[metric: "pace_s_per_km"] == 50)
    }

    @Test("CSC: speed and cadence derived from consecutive packets")
    func cscDerived() throws {
        var n = WearMetricsNormalizer()
        let a = try GATTDecoder.decode(.cscMeasurement, bytes: payload("03 0A 00 00 00 00 00 0A 00 00 00"))
        let b = try GATTDecoder.decode(.cscMeasurement, bytes: payload("03 14 00 00 00 00 04 0B 00 00 04"))
        let firstValue = n.normalize(a, deviceID: "c", at: t0)
        let first = try #require(firstValue)
        #expect(first[metric: "speed_mps"] == nil)
        let secondValue = n.normalize(b, deviceID: "c", at: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + 1000))
        let second = try #require(secondValue)
        #expect(abs(second[metric: "speed_mps"]! - 23.4) < 1e-9)
        #expect(second[metric: "cadence_rpm"] == 60)
        #expect(second[metric: "wheel_revs_total"] == 20)
    }

    @Test("health: PLX specials and unusable status, temperature, weight, body composition")
    func health() throws {
        var n = WearMetricsNormalizer()
        let plxValue = n.normalize(try GATTDecoder.decode(.plxContinuousMeasurement, bytes: payload("00 62 00 FF 07")), deviceID: "o", at: t0)
        let plx = try #require(plxValue)
        #expect(plx[metric: "spo2_pct"] == 98)
        #expect(plx[metric: "pulse_rate_bpm"] == nil)
        #expect(n.normalize(try GATTDecoder.decode(.plxContinuousMeasurement, bytes: payload("04 62 00 48 00 00 80")), deviceID: "o", at: t0) == nil)
        let tempValue = n.normalize(try GATTDecoder.decode(.temperatureMeasurement, bytes: payload("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04")), deviceID: "h", at: t0)
        let temp = try #require(tempValue)
        #expect(temp[metric: "body_temp_c"] == 37.6)
        #expect(temp.meta["temperature_site"] == "finger")
        #expect(temp.meta["device_timestamp"] == "2012-12-05T11:50:27")
        let wValue = n.normalize(try GATTDecoder.decode(.weightMeasurement, bytes: payload("0E 80 3E DC 07 0C 05 0B 32 1B 01 F5 00 B6 06")), deviceID: "s", at: t0)
        let w = try #require(wValue)
        #expect(w[metric: "weight_kg"] == 80 && w[metric: "bmi"] == 24.5 && w[metric: "height_cm"] == 171.8)
        #expect(w.meta["user_id"] == "1" && w.meta["units_reported"] == "si")
        #expect(n.normalize(try GATTDecoder.decode(.weightMeasurement, bytes: payload("00 FF FF")), deviceID: "s", at: t0) == nil)
        let bcsValue = n.normalize(try GATTDecoder.decode(.bodyCompositionMeasurement, bytes: payload("0C 06 FA 00 01 D0 1B 88 13 80 3E")), deviceID: "s", at: t0)
        let bcs = try #require(bcsValue)
        #expect(bcs[metric: "body_fat_pct"] == 25 && bcs[metric: "impedance_ohm"] == 500 && bcs[metric: "basal_metabolism_kj"] == 7120)
    }

    @Test("an imperial scale: pounds and inches become weight_kg and height_cm (WSS flags bit 0; BCS flags bit 0)")
    func imperialScale() throws {
        let t0 = UTCTimestamp(millisecondsSince1970: 1_767_225_600_000)
        var n = WearMetricsNormalizer()
        // Flags 0x09: imperial, BMI and height. Weight 0x46D0 = 18128 → 181.28 lb; BMI 0x00EF → 23.9; height 0x02E8 = 744 → 74.4 in.
        let w = try #require(n.normalize(try GATTDecoder.decode(.weightMeasurement, bytes: payload("09 D0 46 EF 00 E8 02")), deviceID: "s", at: t0))
        #expect(abs((w[metric: "weight_kg"] ?? 0) - 82.2272248336) < 1e-9)
        #expect(abs((w[metric: "height_cm"] ?? 0) - 188.976) < 1e-9)
        #expect(w[metric: "bmi"] == 23.9)
        #expect(w.meta["units_reported"] == "imperial")
        // Flags 0x0C01: imperial, weight and height present. Body fat 0x00C8 → 20.0 %.
        let b = try #require(n.normalize(try GATTDecoder.decode(.bodyCompositionMeasurement, bytes: payload("01 0C C8 00 D0 46 E8 02")), deviceID: "s", at: t0))
        #expect(b[metric: "body_fat_pct"] == 20)
        #expect(abs((b[metric: "weight_kg"] ?? 0) - 82.2272248336) < 1e-9)
        #expect(abs((b[metric: "height_cm"] ?? 0) - 188.976) < 1e-9)
        #expect(b.meta["units_reported"] == "imperial")
    }
}

@Suite("Validation and freshness")
struct ValidationTests {
    func hrRecord(_ hr: UInt8) throws -> WearMetrics {
        WearMetricsNormalizer.record(heartRate: try HeartRateMeasurement(bytes: [0x06, hr]), deviceID: "d", at: t0)
    }

    @Test("HR outside 30...220 is dropped by default, flagged when configured")
    func heartRateRange() throws {
        let v = WearMetricsValidator()
        #expect(v.validate(try hrRecord(72)) != nil)
        #expect(v.validate(try hrRecord(30)) != nil)
        #expect(v.validate(try hrRecord(220)) != nil)
        #expect(v.validate(try hrRecord(29)) == nil)
        #expect(v.validate(try hrRecord(221)) == nil)
        let flagged = WearMetricsValidator(policy: .flag).validate(try hrRecord(250))
        #expect(flagged?.meta["validation_flags"] == "hr_out_of_range")
        #expect(flagged?[metric: "hr"] == 250)
    }

    @Test("RMSSD outside 0...500 and negative steps fail")
    func rmssdRange() {
        var r = WearMetrics(timestamp: t0, deviceID: "d", source: "ble_hrm")
        r.setMetric("hrv_rmssd", 500)
        #expect(WearMetricsValidator().validate(r) != nil)
        r.setMetric("hrv_rmssd", 500.5)
        #expect(WearMetricsValidator().validate(r) == nil)
        r.setMetric("steps", -1)
        #expect(WearMetricsValidator().failures(r) == ["hrv_rmssd_out_of_range", "steps_negative"])
    }

    @Test("a record older than 24 h is never current; age configurable")
    func freshness() throws {
        var store = CurrentMetricsStore()
        store.update(try hrRecord(72))
        let day = Int64(86_400_000)
        #expect(store.current(deviceID: "d", source: "ble_hrm", now: t0) != nil)
        #expect(store.current(deviceID: "d", source: "ble_hrm", now: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + day)) != nil)
        #expect(store.current(deviceID: "d", source: "ble_hrm", now: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + day + 1)) == nil)
        let short = FreshnessPolicy(maximumAge: 60)
        #expect(!short.isCurrent(try hrRecord(72), now: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + 61_000)))
        #expect(!short.isCurrent(try hrRecord(72), now: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 - 301_000)))
        store.prune(now: UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + 2 * day))
        #expect(store.currentRecords(now: t0).isEmpty)
    }

    @Test("an older record does not replace a newer one")
    func ordering() throws {
        var store = CurrentMetricsStore()
        var newer = try hrRecord(80)
        newer.timestamp = UTCTimestamp(millisecondsSince1970: t0.millisecondsSince1970 + 1000)
        store.update(newer)
        store.update(try hrRecord(70))
        #expect(store.current(deviceID: "d", source: "ble_hrm", now: t0)?[metric: "hr"] == 80)
    }
}

@Suite("HRV records")
struct HRVRecordTests {
    @Test("HRV report → hrv_* metrics and quality meta; unreliable windows left out")
    func hrvRecord() throws {
        var engine = HRVEngine(configuration: HRVEngineConfiguration(rmssdWindow: 60, sdnnWindow: 300, emitEvery: 5))
        var t = 1_767_238_262.0
        var last: HRVReport?
        for i in 0..<400 {
            let rr = 800.0 + (i % 2 == 0 ? 20 : -20)
            t += rr / 1000
            if let r = engine.ingest(deviceID: "strap", rrMilliseconds: [rr], receivedAt: t) { last = r }
            if i == 100 { engine.setContext(.exercise, deviceID: "strap") }
        }
        let report = try #require(last)
        let r = try #require(WearMetricsNormalizer().record(hrv: report))
        #expect(r[metric: "hrv_rmssd"] == 40)
        // 60 s holds an odd number of beats alternating 820/780 ms.
        let mean = try #require(r[metric: "hrv_mean_rr_ms"])
        #expect(abs(mean - 800) < 20.0 / 70)
        #expect(r[metric: "hrv_mean_hr_bpm"] == 60000 / mean)
        #expect(r[metric: "hrv_sdnn"] != nil)
        #expect(r.meta["hrv_window_s"] == "60")
        #expect(r.meta["hrv_method"] == "median20")
        #expect(r.meta["hrv_context"] == "exercise")
        #expect(r.meta["hrv_artifact_pct"] == "0.0")
        // 40 ms alternation: every |ΔNN| is 40 → pNN50 0.
        #expect(r[metric: "hrv_pnn50_pct"] == 0)

        var short = report
        short.long.meetsMinimumData = false
        let s = try #require(WearMetricsNormalizer().record(hrv: short))
        #expect(s[metric: "hrv_sdnn"] == nil && s[metric: "hrv_rmssd"] == 40)
        var sixty = report
        sixty.long.windowSeconds = 60
        #expect(WearMetricsNormalizer().record(hrv: sixty)?[metric: "hrv_sdnn_60s_ms"] != nil)
    }
}
