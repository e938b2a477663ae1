// SPDX-License-Identifier: MIT
import GATT
import Testing

func ftms(_ c: GATTCharacteristic, _ hex: String) throws -> FitnessMachineData {
    guard case let .fitnessMachine(m) = try decode(c, hex) else { throw GATTDecodeError(characteristic: c, field: "test", offset: 0, reason: .missingRRIntervals) }
    return m
}

@Suite("Fitness Machine data (FTMS v1.0 and GSS layouts)")
struct FitnessMachineTests {
    @Test("treadmill vector 3: speed, distance, energy with N/A sentinels, elapsed")
    func treadmillVector() throws {
        let m = try ftms(.treadmillData, "84 04 F4 01 E8 03 00 2D 00 FF FF FF 58 02")
        #expect(m.layout == .v1)
        #expect(m.layoutAmbiguous)
        #expect(m.flags == 0x0484)
        #expect(!m.moreData)
        #expect(m[.instantaneousSpeed] == 5.0)
        #expect(m[.totalDistance] == 1000)
        #expect(m[.totalEnergy] == 45)
        #expect(m[.energyPerHour] == nil)
        #expect(m[.energyPerMinute] == nil)
        #expect(m.notAvailable == [.energyPerHour, .energyPerMinute])
        #expect(m[.elapsedTime] == 600)
    }

    @Test("treadmill pace: uint8 km/min (v1.0) vs uint16 s (GSS), chosen by length")
    func treadmillPace() throws {
        let v1 = try ftms(.treadmillData, "20 00 F4 01 0C")
        #expect(v1.layout == .v1 && !v1.layoutAmbiguous)
        #expect(v1[.instantaneousPace] == 1.2)
        let gss = try ftms(.treadmillData, "20 00 F4 01 2C 01")
        #expect(gss.layout == .gss)
        #expect(gss[.instantaneousPace] == 300)
        #expect(gss[.instantaneousSpeed] == 5.0)
        #expect(rejection(.treadmillData, "20 00 F4 01 2C 01 00") ==
            GATTDecodeError(characteristic: .treadmillData, field: "record length", offset: 7,
                            reason: .layoutMismatch(length: 7, expectedV1: 5, expectedGSS: 6)))
        #expect(rejection(.treadmillData, "20 00 F4 01")?.description ==
            "treadmill_data (0x2ACD): instantaneous_pace: need 1 byte(s) at offset 4, only 0 left")
    }

    @Test("treadmill: inclination signed, elevation /10, force and power")
    func treadmillSigned() throws {
        let m = try ftms(.treadmillData, "19 10 E2 FF 9C FF 7B 00 0A 00 F6 FF 2C 01")
        #expect(m.moreData)
        #expect(m[.instantaneousSpeed] == nil)
        #expect(m[.inclination] == -3.0)
        #expect(m[.rampAngle] == -10.0)
        #expect(m[.positiveElevationGain] == 12.3)
        #expect(m[.negativeElevationGain] == 1.0)
        #expect(m[.forceOnBelt] == -10)
        #expect(m[.powerOutput] == 300)
    }

    @Test("cross trainer (record of reference §7.3) in both layouts")
    func crossTrainer() throws {
        let v1 = try ftms(.crossTrainerData, "8C 29 00 20 03 2C 01 00 5A 00 55 00 32 00 96 00 82 58 02")
        #expect(v1.layout == .v1)
        #expect(v1.flags == 0x00298C)
        #expect(v1[.instantaneousSpeed] == 8.0)
        #expect(v1[.totalDistance] == 300)
        #expect(v1[.stepRate] == 90)
        #expect(v1[.averageStepRate] == 85)
        #expect(v1[.resistanceLevel] == 5.0)
        #expect(v1[.instantaneousPower] == 150)
        #expect(v1[.heartRate] == 130)
        #expect(v1[.elapsedTime] == 600)
        #expect(v1.movementBackward == false)
        let gss = try ftms(.crossTrainerData, "8C 29 00 20 03 2C 01 00 5A 00 55 00 05 96 00 82 58 02")
        #expect(gss.layout == .gss)
        #expect(gss[.resistanceLevel] == 5)
        #expect(gss[.instantaneousPower] == 150)
        #expect(gss[.heartRate] == 130)
        #expect(gss[.elapsedTime] == 600)
    }

    @Test("cross trainer: 24-bit flags, movement direction, RFU bits, stride count /10")
    func crossTrainerFlags() throws {
        let m = try ftms(.crossTrainerData, "10 80 FF 20 03 0F 00")
        #expect(m.movementBackward == true)
        #expect(m.rfuFlagBits == 0xFF0000)
        #expect(m[.instantaneousSpeed] == 8.0)
        #expect(m[.strideCount] == 1.5)
        #expect(rejection(.crossTrainerData, "00 00")?.field == "flags")
    }

    @Test("rower: stroke rate 0.5 resolution, resistance sint16 (v1.0) vs uint8 (GSS)")
    func rower() throws {
        let basic = try ftms(.rowerData, "00 00 30 0A 00")
        #expect(basic[.strokeRate] == 24)
        #expect(basic[.strokeCount] == 10)
        let v1 = try ftms(.rowerData, "A0 00 30 0A 00 C8 00 FB FF")
        #expect(v1.layout == .v1)
        #expect(v1[.instantaneousPower] == 200)
        #expect(v1[.resistanceLevel] == -5)
        let gss = try ftms(.rowerData, "A0 00 30 0A 00 C8 00 05")
        #expect(gss.layout == .gss)
        #expect(gss[.resistanceLevel] == 5)
    }

    @Test("rower: More Data fragment and pace 0xFFFF = not available")
    func rowerFragments() throws {
        let f = try ftms(.rowerData, "05 00 E8 03 00")
        #expect(f.moreData)
        #expect(f[.strokeRate] == nil)
        #expect(f[.totalDistance] == 1000)
        let p = try ftms(.rowerData, "09 00 FF FF")
        #expect(p.notAvailable == [.rowerInstantaneousPace])
        #expect(p.values.isEmpty)
        let q = try ftms(.rowerData, "09 00 78 00")
        #expect(q[.rowerInstantaneousPace] == 120)
    }

    @Test("indoor bike: bit 1 average speed, bit 2 cadence, power")
    func indoorBike() throws {
        let m = try ftms(.indoorBikeData, "46 00 D0 07 C4 09 B4 00 96 00")
        #expect(m[.instantaneousSpeed] == 20)
        #expect(m[.averageSpeed] == 25)
        #expect(m[.instantaneousCadence] == 90)
        #expect(m[.instantaneousPower] == 150)
    }

    @Test("indoor bike: resistance in both layouts, negative, energy N/A, RFU")
    func indoorBikeLayouts() throws {
        #expect(try ftms(.indoorBikeData, "20 00 D0 07 0A 00").layout == .v1)
        #expect(try ftms(.indoorBikeData, "20 00 D0 07 0A 00")[.resistanceLevel] == 10)
        #expect(try ftms(.indoorBikeData, "20 00 D0 07 0A").layout == .gss)
        #expect(try ftms(.indoorBikeData, "20 00 D0 07 FB FF")[.resistanceLevel] == -5)
        let e = try ftms(.indoorBikeData, "01 01 2D 00 FF FF FF")
        #expect(e.moreData)
        #expect(e[.totalEnergy] == 45)
        #expect(e.notAvailable == [.energyPerHour, .energyPerMinute])
        let r = try ftms(.indoorBikeData, "00 E0 D0 07")
        #expect(r.rfuFlagBits == 0xE000)
        #expect(r[.instantaneousSpeed] == 20)
        #expect(rejection(.indoorBikeData, "00 00 D0 07 00")?.reason ==
            .layoutMismatch(length: 5, expectedV1: 4, expectedGSS: 4))
    }

    @Test("flags announcing fields that are missing reject the record")
    func missingFields() {
        #expect(rejection(.indoorBikeData, "40 00 D0 07 96")?.description ==
            "indoor_bike_data (0x2AD2): instantaneous_power_w: need 2 byte(s) at offset 4, only 1 left")
        #expect(rejection(.rowerData, "00 00 30 0A")?.field == "stroke_count")
    }
}
