// SPDX-License-Identifier: MIT
import GATT
import Testing

@Suite("RSC, CSC, Cycling Power")
struct SportsCharacteristicTests {
    @Test("RSC vector 1: all fields, running")
    func rscAll() throws {
        guard case let .rscMeasurement(m) = try decode(.rscMeasurement, "07 00 03 12 56 00 01 00 00 F0") else { Issue.record(); return }
        #expect(m.flags == 0x07)
        #expect(m.speedMetersPerSecond == 3.0)
        #expect(m.cadence == 18)
        #expect(m.isRunning)
        #expect(approx(m.strideLengthMeters, 0.86))
        #expect(approx(m.totalDistanceMeters, 402653184.1, tolerance: 1e-6))
    }

    @Test("RSC vector 3: total distance truncated")
    func rscTruncated() {
        let e = rejection(.rscMeasurement, "07 00 03 12 56 00 01 00 00")
        #expect(e?.description == "rsc_measurement (0x2A53): total distance: need 4 byte(s) at offset 6, only 3 left")
        #expect(rejection(.rscMeasurement, "00 00 03")?.field == "instantaneous cadence")
    }

    @Test("RSC RFU flag bits ignored, trailing bytes counted")
    func rscRFU() throws {
        guard case let .rscMeasurement(m) = try decode(.rscMeasurement, "F8 80 02 50 AA") else { Issue.record(); return }
        #expect(m.speedMetersPerSecond == 2.5)
        #expect(m.cadence == 80)
        #expect(m.strideLengthMeters == nil && m.totalDistanceMeters == nil)
        #expect(m.rfuFlagBits == 0xF8)
        #expect(m.ignoredTrailingBytes == 1)
    }

    @Test("CSC vectors 1-3")
    func csc() throws {
        guard case let .cscMeasurement(w) = try decode(.cscMeasurement, "01 39 30 00 00 E8 03") else { Issue.record(); return }
        #expect(w.cumulativeWheelRevolutions == 12345 && w.lastWheelEventTime == 1000 && w.cumulativeCrankRevolutions == nil)
        guard case let .cscMeasurement(c) = try decode(.cscMeasurement, "02 59 01 D0 07") else { Issue.record(); return }
        #expect(c.cumulativeCrankRevolutions == 345 && c.lastCrankEventTime == 2000 && c.cumulativeWheelRevolutions == nil)
        guard case let .cscMeasurement(b) = try decode(.cscMeasurement, "03 39 30 00 00 E8 03 59 01 D0 07") else { Issue.record(); return }
        #expect(b.cumulativeWheelRevolutions == 12345 && b.lastWheelEventTime == 1000)
        #expect(b.cumulativeCrankRevolutions == 345 && b.lastCrankEventTime == 2000)
    }

    @Test("CSC vector 6: crank time missing")
    func cscTruncated() {
        #expect(rejection(.cscMeasurement, "03 14 00 00 00 00 00 0A 00")?.description ==
            "csc_measurement (0x2A5B): crank time: need 2 byte(s) at offset 9, only 0 left")
    }

    @Test("derived speed: 10 wheel revolutions in 1 s at 2.340 m")
    func wheelSpeed() throws {
        var t = RevolutionRateTracker.cscWheel(circumferenceMeters: 2.340)
        #expect(t.update(revolutions: 10, eventTime: 0) == nil)
        let sample = t.update(revolutions: 20, eventTime: 1024)
        let s = try #require(sample)
        #expect(approx(s.rate, 23.4))
        #expect(approx(s.deltaDistanceMeters, 23.4))
    }

    @Test("derived cadence: plain and double rollover")
    func crankCadence() throws {
        var t = RevolutionRateTracker.crank()
        _ = t.update(revolutions: 10, eventTime: 0)
        #expect(t.update(revolutions: 11, eventTime: 1024)?.rate == 60)
        var r = RevolutionRateTracker.crank()
        _ = r.update(revolutions: 65534, eventTime: 64512)
        let sample = r.update(revolutions: 1, eventTime: 1024)
        let s = try #require(sample)
        #expect(s.deltaRevolutions == 3)
        #expect(s.rate == 90)
    }

    @Test("wheel counter wrap at 2^32 and time wrap at 2^16")
    func wheelRollover() throws {
        var t = RevolutionRateTracker.cscWheel(circumferenceMeters: 2.0)
        _ = t.update(revolutions: UInt32.max - 1, eventTime: 65000)
        let sample = t.update(revolutions: 2, eventTime: 65000 &+ 1024)
        let s = try #require(sample)
        #expect(s.deltaRevolutions == 4)
        #expect(s.rate == 8)
    }

    @Test("CPS wheel ticks are 1/2048 s")
    func cpsWheel() throws {
        var t = RevolutionRateTracker.cpsWheel(circumferenceMeters: 2.0)
        _ = t.update(revolutions: 0, eventTime: 0)
        #expect(t.update(revolutions: 5, eventTime: 2048)?.rate == 10)
    }

    @Test("staleness: last rate kept for 2 packets without a new event, then 0")
    func staleness() {
        var t = RevolutionRateTracker.crank()
        _ = t.update(revolutions: 10, eventTime: 0)
        #expect(t.update(revolutions: 11, eventTime: 1024)?.rate == 60)
        #expect(t.update(revolutions: 11, eventTime: 1024)?.rate == 60)
        #expect(t.update(revolutions: 11, eventTime: 1024)?.rate == 60)
        #expect(t.update(revolutions: 11, eventTime: 1024)?.rate == 0)
    }

    @Test("packets further apart than one rollover period re-initialise; glitches dropped")
    func reinitialise() {
        var t = RevolutionRateTracker.crank()
        _ = t.update(revolutions: 10, eventTime: 0, receivedAt: 100)
        #expect(t.update(revolutions: 11, eventTime: 1024, receivedAt: 200) == nil)
        #expect(t.update(revolutions: 12, eventTime: 2048, receivedAt: 201)?.rate == 60)
        #expect(t.update(revolutions: 100, eventTime: 3072, receivedAt: 202) == nil)   // 5280 rpm
    }

    @Test("cycling power: minimal, negative power, all common fields")
    func cyclingPower() throws {
        guard case let .cyclingPowerMeasurement(a) = try decode(.cyclingPowerMeasurement, "00 00 C8 00") else { Issue.record(); return }
        #expect(a.instantaneousPowerWatts == 200)
        guard case let .cyclingPowerMeasurement(n) = try decode(.cyclingPowerMeasurement, "00 00 F6 FF") else { Issue.record(); return }
        #expect(n.instantaneousPowerWatts == -10)
        guard case let .cyclingPowerMeasurement(m) = try decode(.cyclingPowerMeasurement,
            "3F 09 FA 00 64 40 01 10 27 00 00 00 08 05 00 00 04 BC 3A 12 0C 00") else { Issue.record(); return }
        #expect(m.instantaneousPowerWatts == 250)
        #expect(m.pedalPowerBalancePercent == 50)
        #expect(m.pedalBalanceReferenceIsLeft)
        #expect(m.accumulatedTorqueNewtonMeters == 10)
        #expect(m.torqueSourceIsCrank)
        #expect(m.cumulativeWheelRevolutions == 10000 && m.lastWheelEventTime == 2048)
        #expect(m.cumulativeCrankRevolutions == 5 && m.lastCrankEventTime == 1024)
        #expect(m.maximumAngleDegrees == 0xABC && m.minimumAngleDegrees == 0x123)
        #expect(m.accumulatedEnergyKJ == 12)
        #expect(m.ignoredTrailingBytes == 0)
    }

    @Test("cycling power: extreme force/torque, dead spots, RFU bits")
    func cyclingPowerExtremes() throws {
        guard case let .cyclingPowerMeasurement(m) = try decode(.cyclingPowerMeasurement,
            "C0 E6 64 00 2C 01 9C FF 40 00 E0 FF 5A 00 0E 01") else { Issue.record(); return }
        #expect(m.maximumForceNewtons == 300 && m.minimumForceNewtons == -100)
        #expect(m.maximumTorqueRaw == 64 && m.minimumTorqueRaw == -32)
        #expect(m.topDeadSpotAngleDegrees == 90 && m.bottomDeadSpotAngleDegrees == 270)
        #expect(m.rfuFlagBits == 0xE000)
    }

    @Test("cycling power: truncation names the field")
    func cyclingPowerTruncated() {
        #expect(rejection(.cyclingPowerMeasurement, "00 00 64")?.description ==
            "cycling_power_measurement (0x2A63): instantaneous power: need 2 byte(s) at offset 2, only 1 left")
        #expect(rejection(.cyclingPowerMeasurement, "20 00 64 00 05 00")?.description ==
            "cycling_power_measurement (0x2A63): last crank event time: need 2 byte(s) at offset 6, only 0 left")
        #expect(rejection(.cyclingPowerMeasurement, "00 01 64 00 BC 3A") ==
            GATTDecodeError(characteristic: .cyclingPowerMeasurement, field: "extreme angles", offset: 4, reason: .truncated(needed: 3, available: 2)))
    }
}
