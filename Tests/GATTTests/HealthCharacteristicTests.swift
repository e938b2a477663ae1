// SPDX-License-Identifier: MIT
import GATT
import Testing

@Suite("PLX, Temperature, Weight, Body Composition")
struct HealthCharacteristicTests {
    @Test("PLX: normal pair, NaN pair, fast pair with unusable status")
    func plx() throws {
        guard case let .plxContinuousMeasurement(m) = try decode(.plxContinuousMeasurement, "00 62 00 48 00") else { Issue.record(); return }
        #expect(m.normal.spo2 == .value(98) && m.normal.pulseRate == .value(72))
        guard case let .plxContinuousMeasurement(n) = try decode(.plxContinuousMeasurement, "00 FF 07 FF 07") else { Issue.record(); return }
        #expect(n.normal.spo2 == .nan && n.normal.spo2.finite == nil)
        // A special value is null in the JSON, its name beside it.
        #expect(try jsonText(n) == #"{"flags":0,"pulse_rate_bpm":null,"pulse_rate_bpm_special":"NaN","spo2_pct":null,"spo2_pct_special":"NaN"}"#)
        guard case let .plxContinuousMeasurement(f) = try decode(.plxContinuousMeasurement, "05 62 00 48 00 61 00 4A 00 00 20") else { Issue.record(); return }
        #expect(f.fast?.spo2 == .value(97) && f.fast?.pulseRate == .value(74))
        #expect(f.measurementStatus == 0x2000)
        #expect(f.isStatusUnusable)
    }

    @Test("PLX: slow pair, 24-bit device status, pulse amplitude index, truncation")
    func plxOptional() throws {
        guard case let .plxContinuousMeasurement(m) = try decode(.plxContinuousMeasurement,
            "1A 62 00 48 00 60 00 46 00 01 02 00 CF F3") else { Issue.record(); return }
        #expect(m.slow?.spo2 == .value(96) && m.slow?.pulseRate == .value(70))
        #expect(m.deviceAndSensorStatus == 0x000201)
        #expect(m.pulseAmplitudeIndex == .value(97.5))
        #expect(m.fast == nil)
        #expect(rejection(.plxContinuousMeasurement, "00 62 00 48")?.description ==
            "plx_continuous_measurement (0x2A5F): SpO2PR-Normal PR: need 2 byte(s) at offset 3, only 1 left")
        #expect(rejection(.plxContinuousMeasurement, "08 62 00 48 00 01 02")?.field == "device and sensor status")
    }

    @Test("temperature vector 1: 37.60 C with timestamp and finger")
    func temperature() throws {
        guard case let .temperatureMeasurement(t) = try decode(.temperatureMeasurement, "06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04") else { Issue.record(); return }
        #expect(t.flags == 0x06)
        #expect(!t.isFahrenheit)
        #expect(t.value == .value(37.6))
        #expect(t.celsius == 37.6)
        #expect(t.timestamp == GATTDateTime(year: 2012, month: 12, day: 5, hours: 11, minutes: 50, seconds: 27))
        #expect(t.timestamp?.isoLocal == "2012-12-05T11:50:27")
        #expect(t.temperatureType == 4)
        #expect(t.temperatureTypeLabel == "finger")
    }

    @Test("temperature vector 4: type flagged but missing")
    func temperatureTruncated() {
        #expect(rejection(.temperatureMeasurement, "06 B0 0E 00 FE DC 07 0C 05 0B 32 1B")?.description ==
            "temperature_measurement (0x2A1C): temperature type: need 1 byte(s) at offset 12, only 0 left")
        #expect(rejection(.temperatureMeasurement, "00 B0 0E 00") ==
            GATTDecodeError(characteristic: .temperatureMeasurement, field: "temperature measurement value", offset: 1,
                            reason: .truncated(needed: 4, available: 3)))
    }

    @Test("temperature: Fahrenheit converted, NaN omitted, intermediate temperature uses the same layout")
    func temperatureUnits() throws {
        guard case let .temperatureMeasurement(f) = try decode(.temperatureMeasurement, "01 DA 03 00 FF") else { Issue.record(); return }
        #expect(f.isFahrenheit && f.value == .value(98.6))
        #expect(approx(f.celsius, 37.0))
        guard case let .temperatureMeasurement(n) = try decode(.temperatureMeasurement, "00 FF FF 7F 00") else { Issue.record(); return }
        #expect(n.value == .nan && n.celsius == nil)
        guard case let .temperatureMeasurement(i) = try decode(.intermediateTemperature, "00 B0 0E 00 FE") else { Issue.record(); return }
        #expect(i.characteristic == .intermediateTemperature && i.celsius == 37.6)
    }

    @Test("weight: SI, full record, imperial, unsuccessful, truncated BMI/height")
    func weight() throws {
        guard case let .weightMeasurement(a) = try decode(.weightMeasurement, "00 80 3E") else { Issue.record(); return }
        #expect(a.weightKilograms == 80)
        guard case let .weightMeasurement(b) = try decode(.weightMeasurement, "0E 80 3E DC 07 0C 05 0B 32 1B 01 F5 00 B6 06") else { Issue.record(); return }
        #expect(b.weightKilograms == 80)
        #expect(b.timestamp?.isoLocal == "2012-12-05T11:50:27")
        #expect(b.userID == 1)
        #expect(b.bmi == 24.5)
        #expect(b.heightMeters == 1.718)
        guard case let .weightMeasurement(c) = try decode(.weightMeasurement, "01 A0 46") else { Issue.record(); return }
        #expect(c.isImperial)
        #expect(approx(c.weightKilograms, 180.8 * 0.45359237))
        guard case let .weightMeasurement(d) = try decode(.weightMeasurement, "00 FF FF") else { Issue.record(); return }
        #expect(d.isMeasurementUnsuccessful && d.weightKilograms == nil)
        #expect(rejection(.weightMeasurement, "08 80 3E F5 00")?.description ==
            "weight_measurement (0x2A9D): height: need 2 byte(s) at offset 5, only 0 left")
        guard case let .weightMeasurement(e) = try decode(.weightMeasurement, "F0 80 3E") else { Issue.record(); return }
        #expect(e.rfuFlagBits == 0xF0 && e.weightKilograms == 80)
        #expect(b.heightCentimeters == 171.8)
    }

    @Test("weight, imperial with BMI and height (flags 0x09): lb and in converted, the reported units kept in the JSON")
    func weightImperial() throws {
        guard case let .weightMeasurement(w) = try decode(.weightMeasurement, "09 D0 46 EF 00 E8 02") else { Issue.record(); return }
        #expect(w.isImperial && w.weightRaw == 18128 && w.heightRaw == 744)
        #expect(approx(w.weightKilograms, 181.28 * 0.45359237))
        #expect(approx(w.heightCentimeters, 188.976))
        #expect(approx(w.heightMeters, 1.88976))
        let json = try fields(w)
        #expect(json["weight_lb"] as? Double == 181.28)
        #expect(json["height_in"] as? Double == 74.4)
        #expect(approx(json["height_cm"] as? Double, 188.976))
        #expect(json["units"] as? String == "imperial")
    }

    @Test("body composition: body fat, optional fields, unsuccessful, multiple packet, truncated")
    func bodyComposition() throws {
        guard case let .bodyCompositionMeasurement(a) = try decode(.bodyCompositionMeasurement, "00 00 FA 00") else { Issue.record(); return }
        #expect(a.bodyFatPercent == 25)
        guard case let .bodyCompositionMeasurement(b) = try decode(.bodyCompositionMeasurement, "0C 06 FA 00 01 D0 1B 88 13 80 3E") else { Issue.record(); return }
        #expect(b.userID == 1)
        #expect(b.basalMetabolismKJ == 7120)
        #expect(b.impedanceOhms == 500)
        #expect(b.weightKilograms == 80)
        guard case let .bodyCompositionMeasurement(c) = try decode(.bodyCompositionMeasurement, "06 06 FF FF DC 07 0C 05 0B 32 1B 02") else { Issue.record(); return }
        #expect(c.isMeasurementUnsuccessful && c.bodyFatPercent == nil)
        #expect(c.userID == 2 && c.timestamp?.year == 2012)
        #expect(c.impedanceOhms == nil && c.weightKilograms == nil)
        guard case let .bodyCompositionMeasurement(d) = try decode(.bodyCompositionMeasurement, "00 10 FA 00") else { Issue.record(); return }
        #expect(d.isMultiplePacket)
        #expect(rejection(.bodyCompositionMeasurement, "00 00 FA")?.description ==
            "body_composition_measurement (0x2A9C): body fat percentage: need 2 byte(s) at offset 2, only 1 left")
        #expect(rejection(.bodyCompositionMeasurement, "F0 01 FA 00 10 00 20 00 30 00 40 00")?.field == "body water mass")
        guard case let .bodyCompositionMeasurement(e) = try decode(.bodyCompositionMeasurement, "31 08 FA 00 5E 01 A0 46 E8 02") else { Issue.record(); return }
        #expect(e.isImperial)
        #expect(e.musclePercent == 35)
        #expect(approx(e.muscleMassKilograms, 180.8 * 0.45359237))
        #expect(approx(e.heightMeters, 74.4 * 0.0254))
    }
}
