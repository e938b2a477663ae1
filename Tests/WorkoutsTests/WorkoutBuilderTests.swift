// SPDX-License-Identifier: MIT

import Effort
import Testing
import WearMetrics
@testable import Workouts

/// Every rule of docs/workouts.md against figures worked out by hand. Without a profile
/// the maximum is 185 bpm: 150 bpm is 81 % (zone 4), 100 bpm 54 % (zone 1), 170 bpm 92 %
/// (zone 5).
@Suite struct WorkoutBuilderTests {
    @Test func startAndEndAreTheFirstAndLastHeartRateHeard() throws {
        let records = [
            strapRecord(2, hr: 0),                                   // no reading
            strapRecord(3, hr: 140, contact: "not_detected"),        // contact lost
            strapRecord(5.25, hr: 140),
            strapRecord(40.5, hr: 141),
            strapRecord(50, hr: 150, contact: "not_detected"),
        ]
        let w = try #require(WorkoutBuilder.build(request(), records: records))
        #expect(w.startTime == at(5.25))
        #expect(w.endTime == at(40.5))
        #expect(w.durationSeconds == 35)   // 35.25 s, whole seconds
        #expect(w.samples.map(\.heartRate) == [140, 141])
    }

    @Test func aGapOfFifteenSecondsIsCarriedInItsZone() throws {
        // Heard at 0, 10, 20: every second is at most 10 s after a heart rate.
        let w = try #require(WorkoutBuilder.build(request(), records: [0, 10, 20].map { strapRecord($0, hr: 150) }))
        #expect(w.durationSeconds == 20)
        #expect(w.secondsInZone == [0, 0, 0, 0, 20, 0])
        // Heard at 0 and 15 only: second 15 is the next heart rate's own.
        let edge = try #require(WorkoutBuilder.build(request(), records: [0, 15].map { strapRecord($0, hr: 150) }))
        #expect(edge.secondsInZone == [0, 0, 0, 0, 15, 0])
    }

    @Test func aLongerGapCountsBelowZoneOne() throws {
        // Heard at 0 and 20: seconds 0…15 are at most 15 s after 0 (16 s in zone 4),
        // seconds 16…19 are older (4 s in index 0).
        let w = try #require(WorkoutBuilder.build(request(), records: [0, 20].map { strapRecord($0, hr: 150) }))
        #expect(w.secondsInZone == [4, 0, 0, 0, 16, 0])
        #expect(w.secondsInZone.reduce(0, +) == w.durationSeconds)
        #expect(w.coverage == 0.05)   // 1 of 20 seconds has a heart rate (second 0)
        // Effort points of the carried seconds only: 16 s × 4 points/min = 1.07.
        #expect(w.effortPoints == 1.1)
    }

    @Test func zonesSumToTheDurationAndGiveThePoints() throws {
        // 100 bpm at 0…29 s, 170 bpm at 30…59 s: 59 s; seconds 0…29 zone 1, 30…58 zone 5.
        let records = steady(100, from: 0, to: 29) + steady(170, from: 30, to: 59)
        let w = try #require(WorkoutBuilder.build(request(), records: records))
        #expect(w.durationSeconds == 59)
        #expect(w.secondsInZone == [0, 30, 0, 0, 0, 29])
        #expect(w.coverage == 1)
        #expect(w.avgHeartRate == 135)
        #expect(w.maxHeartRate == 170)
        #expect(w.minHeartRate == 100)
        #expect(w.effortPoints == 2.4)   // (30 × 1 + 29 × 4) / 60 = 2.43
    }

    @Test func coverageCountsSecondsThatHoldAHeartRate() throws {
        // Heard at 0, 0.5, 3.9, 4.2, 10: seconds 0, 3, 4 of 10 hold one.
        let w = try #require(WorkoutBuilder.build(request(), records: [0, 0.5, 3.9, 4.2, 10].map { strapRecord($0, hr: 150) }))
        #expect(w.durationSeconds == 10)
        #expect(w.coverage == 0.3)
    }

    @Test func averageIsTheMeanOfTheHeardValues() throws {
        // A ~1 Hz strap with jitter and a dropped second: the mean of what it sent.
        let times: [Double] = [0, 1.02, 1.98, 3.05, 5.01, 6, 6.97, 8.03]
        let hrs: [Double] = [120, 121, 125, 130, 129, 133, 140, 138]
        let w = try #require(WorkoutBuilder.build(request(), records: zip(times, hrs).map { strapRecord($0, hr: $1) }))
        #expect(w.avgHeartRate == 129.5)   // 1036 / 8
        #expect(w.maxHeartRate == 140)
        #expect(w.minHeartRate == 120)
    }

    @Test func withoutAProfileTheMaximumIs185() throws {
        // 92 bpm is 49.7 % of 185 (below zone 1), 93 bpm 50.3 % (zone 1).
        let below = try #require(WorkoutBuilder.build(request(), records: steady(92, from: 0, to: 10)))
        #expect(below.secondsInZone == [10, 0, 0, 0, 0, 0])
        let above = try #require(WorkoutBuilder.build(request(), records: steady(93, from: 0, to: 10)))
        #expect(above.secondsInZone == [0, 10, 0, 0, 0, 0])
        #expect(above.formulas.zones == "pct-max-50-60-70-80-90/v1")
        // A gym's own default applies the same way: 93 bpm is 46.5 % of 200.
        let gym = try #require(WorkoutBuilder.build(request(defaultMaxHR: 200), records: steady(93, from: 0, to: 10)))
        #expect(gym.secondsInZone == [10, 0, 0, 0, 0, 0])
    }

    @Test func theProfileMaximumOrAgeWinsOverTheDefault() throws {
        // 130 bpm: 81 % of a configured 160 (zone 4); 72 % of Tanaka's 180 at age 40 (zone 3).
        let configured = try #require(WorkoutBuilder.build(request(profile: MemberProfile(maxHR: 160)), records: steady(130, from: 0, to: 10)))
        #expect(configured.secondsInZone == [0, 0, 0, 0, 10, 0])
        let aged = try #require(WorkoutBuilder.build(request(profile: MemberProfile(age: 40)), records: steady(130, from: 0, to: 10)))
        #expect(aged.secondsInZone == [0, 0, 0, 10, 0, 0])
    }

    @Test func aRestingHeartRateGivesKarvonenZones() throws {
        // Max 180, rest 70: 148 bpm is 70.9 % of the reserve (zone 3), though 82 % of the max.
        let w = try #require(WorkoutBuilder.build(request(profile: MemberProfile(maxHR: 180, restingHR: 70)), records: steady(148, from: 0, to: 10)))
        #expect(w.secondsInZone == [0, 0, 0, 10, 0, 0])
        #expect(w.formulas.zones == "karvonen/v1")
    }

    @Test func caloriesNeedWeightAgeAndSex() throws {
        let records = steady(150, from: 0, to: 60)
        let noWeight = try #require(WorkoutBuilder.build(request(profile: MemberProfile(age: 30, sex: .male)), records: records))
        #expect(noWeight.caloriesActive == nil)
        #expect(noWeight.jsonString.contains("\"calories_active\":null"))
        #expect(try #require(WorkoutBuilder.build(request(), records: records)).caloriesActive == nil)
        // Keytel, man of 30 years and 80 kg at 150 bpm: 61.4931 / 4.184 = 14.697 kcal/min, for 60 s.
        let full = try #require(WorkoutBuilder.build(request(profile: MemberProfile(age: 30, weightKg: 80, sex: .male)), records: records))
        #expect(full.caloriesActive == 14.7)
        #expect(full.formulas.kcal == "keytel-2005/v1")
    }

    @Test func rrIntervalsGiveRMSSD() throws {
        // 800 and 820 ms in turn: every successive difference is 20 ms, RMSSD 20.
        let records = (0...20).map { strapRecord(Double($0), hr: 74, rr: [$0 % 2 == 0 ? 800 : 820]) }
        let w = try #require(WorkoutBuilder.build(request(), records: records))
        #expect(w.hrvRMSSDMilliseconds == 20)
        #expect(w.jsonString.contains("\"hrv_rmssd_ms\":20,"))
    }

    @Test func withoutRRTheKeyIsAbsent() throws {
        let w = try #require(WorkoutBuilder.build(request(), records: steady(120, from: 0, to: 30)))
        #expect(w.hrvRMSSDMilliseconds == nil)
        #expect(!w.jsonString.contains("hrv_rmssd_ms"))
    }

    @Test func lateRecordsAreSortedIn() throws {
        let records = steady(100, from: 0, to: 29) + steady(170, from: 30, to: 59)
        var shuffled = records
        shuffled.swapAt(0, 59)
        shuffled.swapAt(10, 45)
        shuffled.reverse()
        #expect(WorkoutBuilder.build(request(), records: shuffled) == WorkoutBuilder.build(request(), records: records))
    }

    @Test func threeHoursWithLateRecords() throws {
        // 10 801 records at 1 Hz, every 50th delivered late (appended at the end).
        let records = (0...10_800).map { strapRecord(Double($0), hr: 90 + Double($0 % 90)) }
        let late = records.enumerated().filter { $0.offset % 50 == 7 }.map(\.element)
        let onTime = records.enumerated().filter { $0.offset % 50 != 7 }.map(\.element)
        let w = try #require(WorkoutBuilder.build(request(windowSeconds: 4 * 3600), records: onTime + late))
        #expect(w == WorkoutBuilder.build(request(windowSeconds: 4 * 3600), records: records))
        #expect(w.durationSeconds == 10_800)
        #expect(w.secondsInZone.reduce(0, +) == 10_800)
        #expect(w.coverage == 1)
        #expect(w.samples.count == 10_801)
        // 90…179 bpm (sum 12 105) 120 times over, plus 90 at the end: 1 452 690 / 10 801 = 134.496.
        #expect(w.avgHeartRate == 134.5)
    }

    @Test func onlyTheClassWindowCounts() throws {
        let records = [strapRecord(-5, hr: 180)] + steady(120, from: 0, to: 10) + [strapRecord(30, hr: 180)]
        let w = try #require(WorkoutBuilder.build(request(windowSeconds: 30), records: records))
        #expect(w.startTime == at(0))
        #expect(w.endTime == at(10))
        #expect(w.maxHeartRate == 120)
    }

    @Test func noHeartRateMeansNoWorkout() {
        #expect(WorkoutBuilder.build(request(), records: []) == nil)
        #expect(WorkoutBuilder.build(request(), records: [strapRecord(1, hr: 0), strapRecord(2, hr: 130, contact: "not_detected")]) == nil)
    }

    @Test func distanceIsWhatMachinesAddedInTheClass() throws {
        // Treadmill at 1000 m when the member's workout starts, 1250 m at its end: 250 m.
        // A bike restarts counting (1040 → 20): 40 + 20 + 40 = 100 m.
        let strap = steady(120, from: 0, to: 10)
        let treadmill = [machineRecord(0.5, distance: 1000), machineRecord(4.5, distance: 1100), machineRecord(9.5, distance: 1250)]
        let w = try #require(WorkoutBuilder.build(request(), records: strap + treadmill))
        #expect(w.distanceMeters == 250)
        #expect(w.samples.first?.distanceMeters == nil)
        #expect(w.samples.last?.distanceMeters == 250)
        let bike = [1000, 1040, 20, 60].enumerated().map { machineRecord(Double($0.offset) + 0.5, distance: Double($0.element), device: "bike-7") }
        #expect(try #require(WorkoutBuilder.build(request(), records: strap + bike)).distanceMeters == 100)
        #expect(try #require(WorkoutBuilder.build(request(), records: strap + treadmill + bike)).distanceMeters == 350)
        // The same, as machines beside the strap's records.
        #expect(try #require(WorkoutBuilder.build(request(), records: strap, machines: bike + treadmill)).distanceMeters == 350)
        let none = try #require(WorkoutBuilder.build(request(), records: strap))
        #expect(none.distanceMeters == nil)
        #expect(none.jsonString.contains("\"distance_meters\":null"))
    }

    @Test func machinesCountOnlyWhileTheMemberIsHeardAndNeverForHeartRate() throws {
        // The member is heard from 10 s to 70 s; their treadmill ran from 0 s to 80 s at
        // 3 m/s, reporting every 2 s. From 10 s (530 m) to 70 s (710 m): 180 m.
        let strap = steady(140, from: 10, to: 70)
        let treadmill = stride(from: 0, through: 80, by: 2).map { machineRecord(Double($0), distance: 500 + 3 * Double($0)) }
        let w = try #require(WorkoutBuilder.build(request(), records: strap, machines: treadmill))
        #expect(w.startTime == at(10) && w.durationSeconds == 60)
        #expect(w.distanceMeters == 180)
        #expect(w.samples.first?.distanceMeters == 0)
        #expect(w.samples[30].distanceMeters == 90)
        #expect(w.samples.last?.distanceMeters == 180)
        // Hand grips: the machine's heart rate is not the member's.
        let grips = treadmill.map { r -> WearMetrics in
            var r = r
            r.setMetric("hr", 190)
            r.meta["hr_source"] = "machine"
            return r
        }
        let g = try #require(WorkoutBuilder.build(request(), records: strap, machines: grips))
        #expect(g.maxHeartRate == 140 && g.avgHeartRate == 140 && g.startTime == at(10) && g.distanceMeters == 180)
        // Machines alone make no workout.
        #expect(WorkoutBuilder.build(request(), records: [], machines: grips) == nil)
        // A machine heard only outside the member's workout adds nothing, not even the key.
        let before = try #require(WorkoutBuilder.build(request(), records: strap, machines: treadmill.filter { $0.timestamp < at(10) }))
        #expect(before.distanceMeters == nil)
    }

    @Test func aCounterThatWrapsRestartsOrGlitches() throws {
        let strap = steady(120, from: 0, to: 12)
        func ftms(_ points: [(Double, Double)]) -> [WearMetrics] { points.map { machineRecord($0.0, distance: $0.1) } }
        func distance(_ machines: [WearMetrics]) throws -> Double? {
            try #require(WorkoutBuilder.build(request(), records: strap, machines: machines)).distanceMeters
        }
        // FTMS counts metres in a uint24: 16,777,190 → 16,777,200 → 10 → 20 is 10 + 26 + 10.
        #expect(try distance(ftms([(0, 16_777_190), (2, 16_777_200), (4, 10), (6, 20)])) == 46)
        // A restart (a new session on the machine): 3000 → 3010 → 5 → 15 is 10 + 5 + 10.
        #expect(try distance(ftms([(0, 3000), (2, 3010), (4, 5), (6, 15)])) == 25)
        // A reading far off, up or down, adds nothing; the count goes on from the readings
        // after it: 2000 → 2010 (+10) → 9000 (glitch) → 2020 (glitch) → 2026 (+6) → 1990
        // (not a restart from 2026 in 2 s: glitch) → 1996 (+6).
        #expect(try distance(ftms([(0, 2000), (2, 2010), (4, 9000), (6, 2020), (8, 2026), (10, 1990), (12, 1996)])) == 22)
        // A step is plausible up to 30 m/s × the seconds between readings + 30 m: a machine
        // not heard for 100 s may have covered 3000 m meanwhile.
        #expect(try distance(ftms([(0, 100), (2, 3100)])) == 0)
        #expect(try distance(ftms([(0, 100), (12, 400)])) == 300)
        // RSC counts decimetres in a uint32: the wrap is at 429,496,729.6 m.
        let rsc = [(0.0, 429_496_720.0), (2, 3.4)].map { p -> WearMetrics in
            var r = machineRecord(p.0, distance: p.1, device: "foot-pod")
            r.source = "ble_rsc"
            return r
        }
        #expect(try distance(rsc) == 13)
        // A wheel sensor (CSC): revolutions × the wheel's circumference, 2.1 m.
        let wheel = [(0.0, 100.0), (2, 112), (4, 120)].map { p -> WearMetrics in
            var metrics = KeyValueList<Double>()
            metrics["wheel_revs_total"] = p.1
            var meta = KeyValueList<String>()
            meta["wheel_circumference_m"] = "2.100"
            return WearMetrics(timestamp: at(p.0), deviceID: "wheel-1", source: "ble_csc", metrics: metrics, meta: meta)
        }
        #expect(try distance(wheel) == 42)
    }

    @Test func trimpIsBanistersOverTheWorkout() throws {
        // 30 min at 130 bpm, man, max 200, rest 40: the fellrnr worked example, 31.8.
        let records = steady(130, from: 0, to: 1800)
        let w = try #require(WorkoutBuilder.build(request(profile: MemberProfile(maxHR: 200, restingHR: 40, sex: .male)), records: records))
        #expect(w.durationSeconds == 1800)
        #expect(w.trimp == 31.8)
    }
}

@Suite struct BanisterTRIMPTests {
    /// fellrnr.com/wiki/TRIMP, "Worked Example": a man with HRmax 200 and HRrest 40,
    /// 30 min at 130 bpm: 30 × 0.5625 × 0.64 e^(1.92 × 0.5625) = 31.8, given as 32.
    @Test func fellrnrWorkedExample() {
        let v = BanisterTRIMP.value(minutes: 30, averageHR: 130, restingHR: 40, maxHR: 200, sex: .male)
        #expect(v.rounded() == 32)
        #expect(abs(v - 31.80) < 0.005)
    }

    /// calculatorhub.com's TRIMP calculator example: 45 min at 150 bpm, rest 60, max 190,
    /// man: 75.36 with their rounded weighting (2.4191); unrounded 75.33.
    @Test func calculatorhubWorkedExample() {
        let v = BanisterTRIMP.value(minutes: 45, averageHR: 150, restingHR: 60, maxHR: 190, sex: .male)
        #expect(abs(v - 75.36) < 0.05)
    }

    @Test func womenAndUnknownSex() {
        // r = 0.5625: women 30 × 0.5625 × 0.86 e^(0.939375) = 37.13; unknown the mean with men's 31.80.
        let f = BanisterTRIMP.value(minutes: 30, averageHR: 130, restingHR: 40, maxHR: 200, sex: .female)
        #expect(abs(f - 37.13) < 0.005)
        let u = BanisterTRIMP.value(minutes: 30, averageHR: 130, restingHR: 40, maxHR: 200, sex: nil)
        #expect(abs(u - (f + 31.80) / 2) < 0.005)
    }

    @Test func outsideTheReserveIsClamped() {
        #expect(BanisterTRIMP.value(minutes: 30, averageHR: 30, restingHR: 40, maxHR: 200, sex: .male) == 0)
        let top = BanisterTRIMP.value(minutes: 1, averageHR: 220, restingHR: 40, maxHR: 200, sex: .male)
        #expect(abs(top - 0.64 * 6.8210) < 0.001)   // r = 1: 0.64 e^1.92 per minute (4.37)
    }
}
