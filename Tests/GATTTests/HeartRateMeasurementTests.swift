// SPDX-License-Identifier: MIT
import GATT
import Testing

@Suite("Heart Rate Measurement 0x2A37")
struct HeartRateMeasurementTests {
    @Test("vector 1: uint8 HR, no options")
    func simple() throws {
        let m = try HeartRateMeasurement(bytes: bytes("00 55"))
        #expect(m.flags == 0x00)
        #expect(!m.isUInt16Format)
        #expect(m.sensorContact == .unsupported)
        #expect(m.heartRate == 85)
        #expect(m.energyExpendedKJ == nil)
        #expect(m.rrIntervalTicks.isEmpty)
        #expect(m.warnings.isEmpty)
    }

    @Test("vector 2: contact supported but not detected")
    func noContact() throws {
        let m = try HeartRateMeasurement(bytes: bytes("04 FF"))
        #expect(m.sensorContact == .notDetected)
        #expect(m.heartRate == 255)
    }

    @Test("vector 3: uint8 HR + contact + EE + 1 RR")
    func uint8WithEnergyAndRR() throws {
        let m = try HeartRateMeasurement(bytes: bytes("1E 55 32 00 21 00"))
        #expect(m.flags == 0x1E)
        #expect(m.sensorContact == .detected)
        #expect(m.heartRate == 85)
        #expect(m.energyExpendedKJ == 50)
        #expect(m.rrIntervalTicks == [33])
        #expect(m.rrIntervalsMilliseconds == [32.2265625])
    }

    @Test("vector 4: uint16 HR + EE + 3 RR at edge values")
    func uint16EdgeValues() throws {
        let m = try HeartRateMeasurement(bytes: bytes("1F 01 01 32 01 01 00 02 01 FF FF"))
        #expect(m.isUInt16Format)
        #expect(m.heartRate == 257)
        #expect(m.energyExpendedKJ == 306)
        #expect(m.rrIntervalTicks == [1, 258, 65535])
        #expect(m.rrIntervalsMilliseconds == [0.9765625, 251.953125, 63999.0234375])
    }

    @Test("vector 7: RR flag without RR values is kept (lenient) or rejected (strict)")
    func rrFlagWithoutValues() throws {
        let m = try HeartRateMeasurement(bytes: bytes("17 01 01"))
        #expect(m.heartRate == 257)
        #expect(m.rrIntervalTicks.isEmpty)
        #expect(m.rrFlagWithoutValues)
        #expect(m.warnings == ["RR flag set but no RR value present (spec requires >=1)"])
        #expect(throws: GATTDecodeError(characteristic: .heartRateMeasurement, field: "rr-interval", offset: 3,
                                        reason: .missingRRIntervals)) {
            try HeartRateMeasurement(bytes: bytes("17 01 01"), options: .strict)
        }
    }

    @Test("truncated payloads are rejected with field and offset")
    func truncated() {
        #expect(rejection(.heartRateMeasurement, "") ==
            GATTDecodeError(characteristic: .heartRateMeasurement, field: "flags", offset: 0, reason: .truncated(needed: 1, available: 0)))
        #expect(rejection(.heartRateMeasurement, "00") ==
            GATTDecodeError(characteristic: .heartRateMeasurement, field: "heart rate value (uint8)", offset: 1, reason: .truncated(needed: 1, available: 0)))
        #expect(rejection(.heartRateMeasurement, "01 55") ==
            GATTDecodeError(characteristic: .heartRateMeasurement, field: "heart rate value (uint16)", offset: 1, reason: .truncated(needed: 2, available: 1)))
        // Energy flag set, energy field cut after one byte: the whole packet goes.
        #expect(rejection(.heartRateMeasurement, "08 55 32") ==
            GATTDecodeError(characteristic: .heartRateMeasurement, field: "energy expended", offset: 2, reason: .truncated(needed: 2, available: 1)))
        #expect(rejection(.heartRateMeasurement, "01 55")?.description ==
            "heart_rate_measurement (0x2A37): heart rate value (uint16): need 2 byte(s) at offset 1, only 1 left")
    }

    @Test("odd dangling RR byte is ignored and counted, complete RR values kept")
    func danglingByte() throws {
        let m = try HeartRateMeasurement(bytes: bytes("10 55 21 00 22"))
        #expect(m.rrIntervalTicks == [33])
        #expect(m.ignoredTrailingBytes == 1)
        let lone = try HeartRateMeasurement(bytes: bytes("10 55 22"))
        #expect(lone.rrIntervalTicks.isEmpty)
        #expect(lone.rrFlagWithoutValues)
    }

    @Test("trailing bytes without RR flag are ignored; RFU bits ignored but visible")
    func trailingAndRFU() throws {
        let m = try HeartRateMeasurement(bytes: bytes("E0 48 AA BB"))
        #expect(m.heartRate == 72)
        #expect(m.rfuFlagBits == 0xE0)
        #expect(m.rrIntervalTicks.isEmpty)
        #expect(m.ignoredTrailingBytes == 2)
    }

    @Test("contact value 1 means unsupported, like 0")
    func contactOne() throws {
        #expect(try HeartRateMeasurement(bytes: bytes("02 48")).sensorContact == .unsupported)
        #expect(try HeartRateMeasurement(bytes: bytes("06 48")).sensorContact == .detected)
    }

    @Test("maximum RR capacity of a 20-byte notification: 9 values")
    func capacity() throws {
        let m = try HeartRateMeasurement(bytes: bytes("10 48" + String(repeating: " 00 04", count: 9)))
        #expect(m.rrIntervalTicks == Array(repeating: 1024, count: 9))
        #expect(m.rrIntervalsMilliseconds.allSatisfy { $0 == 1000 })
    }

    @Test("slices that do not start at index 0 and non-contiguous collections decode the same")
    func slices() throws {
        let full = bytes("AA BB 1E 55 32 00 21 00")
        let slice = full[2...]
        #expect(slice.startIndex == 2)
        let fromSlice = try HeartRateMeasurement(bytes: slice)
        let fromLazy = try HeartRateMeasurement(bytes: full.lazy.dropFirst(2).map { $0 })
        let direct = try HeartRateMeasurement(bytes: bytes("1E 55 32 00 21 00"))
        #expect(fromSlice == direct)
        #expect(fromLazy == direct)
    }

    @Test("JSON of vector 3")
    func json() throws {
        let d = try decode(.heartRateMeasurement, "1E 55 32 00 21 00")
        #expect(try jsonText(d) ==
            #"{"energy_expended_kj":50,"flags":30,"hr_bpm":85,"hr_format":"uint8","rr_ms":[32.2265625],"rr_raw_1_1024s":[33],"sensor_contact":"detected"}"#)
    }
}
