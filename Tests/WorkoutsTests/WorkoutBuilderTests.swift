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
        // Treadmill at 1000 m when the class starts, 1250 m at the end: 250 m. A bike
        // restarts counting (1200 → 50): 200 + 50 + 100 = 350 m.
        let strap = steady(120, from: 0, to: 10)
        let treadmill = [machineRecord(0.5, distance: 1000), machineRecord(4.5, distance: 1100), machineRecord(9.5, distance: 1250)]
        let w = try #require(WorkoutBuilder.build(request(), records: strap + treadmill))
        #expect(w.distanceMeters == 250)
        #expect(w.samples.first?.distanceMeters == nil)
        #expect(w.samples.last?.distanceMeters == 250)
        let bike = [1000, 1200, 50, 150].enumerated().map { machineRecord(Double($0.offset) + 0.5, distance: Double($0.element), device: "bike-7") }
        #expect(try #require(WorkoutBuilder.build(request(), records: strap + bike)).distanceMeters == 350)
        #expect(try #require(WorkoutBuilder.build(request(), records: strap + treadmill + bike)).distanceMeters == 600)
        let none = try #require(WorkoutBuilder.build(request(), records: strap))
        #expect(none.distanceMeters == nil)
        #expect(!none.jsonString.contains("distance_meters"))
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
