// SPDX-License-Identifier: MIT
import Effort
import Testing

@Suite("Effort maths against the published worked examples")
struct EffortTests {
    @Test("Tanaka: a 40-year-old's maximum is 180 (Tanaka, Monahan & Seals 2001), a 20-year-old's 194")
    func tanaka() {
        #expect(MaxHeartRate.tanaka(age: 40) == 180)
        #expect(MaxHeartRate.tanaka(age: 20) == 194)
        #expect(MaxHeartRate.of(MemberProfile(age: 40)) == MaxHeartRate(bpm: 180, estimated: true))
        #expect(MaxHeartRate.of(MemberProfile(age: 40, maxHR: 191)) == MaxHeartRate(bpm: 191, estimated: false))
        #expect(MaxHeartRate.of(MemberProfile()) == nil)
    }

    @Test("Zones from % of max: 50/60/70/80/90 % boundaries, zone 0 below 50 %")
    func percentZones() {
        #expect(HeartRateZone.zone(hr: 89, max: 180) == 0)
        #expect(HeartRateZone.zone(hr: 90, max: 180) == 1)
        #expect(HeartRateZone.zone(hr: 108, max: 180) == 2)
        #expect(HeartRateZone.zone(hr: 125, max: 180) == 2)
        #expect(HeartRateZone.zone(hr: 126, max: 180) == 3)
        #expect(HeartRateZone.zone(hr: 144, max: 180) == 4)
        #expect(HeartRateZone.zone(hr: 162, max: 180) == 5)
        #expect(HeartRateZone.zone(hr: 200, max: 180) == 5)
    }

    @Test("Karvonen: max 180, rest 70, 70 % of the reserve is 147 bpm (the textbook worked example)")
    func karvonen() {
        #expect(abs(HeartRateZone.target(share: 0.70, max: 180, resting: 70) - 147) < 1e-9)
        #expect(abs(HeartRateZone.target(share: 0.50, max: 180, resting: 70) - 125) < 1e-9)
        #expect(HeartRateZone.zone(hr: 147, max: 180, resting: 70) == 3)
        #expect(HeartRateZone.zone(hr: 146, max: 180, resting: 70) == 2)
        // 126 bpm is zone 3 by % of max but zone 1 by reserve: a low resting rate counts.
        #expect(HeartRateZone.zone(hr: 126, max: 180, resting: 70) == 1)
        // A resting rate at or above the maximum is ignored rather than dividing by zero.
        #expect(HeartRateZone.zone(hr: 126, max: 180, resting: 180) == 3)
    }

    @Test("Keytel et al. (2005): the sex-specific equations, in kcal/min")
    func keytel() throws {
        // Male, 30 y, 80 kg, 150 bpm: (-55.0969 + 0.6309*150 + 0.1988*80 + 0.2017*30) / 4.184
        let male = try #require(EnergyExpenditure.kcalPerMinute(hr: 150, profile: MemberProfile(age: 30, weightKg: 80, sex: .male)))
        #expect(abs(male - 61.4931 / 4.184) < 1e-9)
        #expect(abs(male - 14.697) < 0.001)
        // Female, 30 y, 60 kg, 150 bpm: (-20.4022 + 0.4472*150 - 0.1263*60 + 0.074*30) / 4.184
        let female = try #require(EnergyExpenditure.kcalPerMinute(hr: 150, profile: MemberProfile(age: 30, weightKg: 60, sex: .female)))
        #expect(abs(female - 41.3198 / 4.184) < 1e-9)
        #expect(abs(female - 9.876) < 0.001)
        // Never negative at rest.
        #expect(EnergyExpenditure.kcalPerMinute(hr: 50, profile: MemberProfile(age: 20, weightKg: 50, sex: .male)) == 0)
    }

    @Test("No kcal without weight, age and sex: no guess")
    func keytelNeedsAll() {
        #expect(EnergyExpenditure.kcalPerMinute(hr: 150, profile: MemberProfile(age: 30, weightKg: 80)) == nil)
        #expect(EnergyExpenditure.kcalPerMinute(hr: 150, profile: MemberProfile(age: 30, sex: .male)) == nil)
        #expect(EnergyExpenditure.kcalPerMinute(hr: 150, profile: MemberProfile(weightKg: 80, sex: .female)) == nil)
    }

    @Test("Effort points: the zone per minute, zone 5 counting as 4")
    func points() {
        #expect((0...5).map { EffortPoints.perMinute(zone: $0) } == [0, 1, 2, 3, 4, 4])
        var tally = EffortTally()
        // Ten minutes in zone 3, one sample a second.
        for s in 0...600 { tally.add(at: Double(s), zone: 3, kcalPerMinute: 10) }
        #expect(abs(tally.points - 30) < 1e-9)
        #expect(abs((tally.kcal ?? 0) - 100) < 1e-9)
        // A 10-minute gap counts as 5 s, not as 10 minutes of work.
        tally.add(at: 1200, zone: 3, kcalPerMinute: 10)
        #expect(abs(tally.points - (30 + 3 * 5.0 / 60)) < 1e-9)
        var noKcal = EffortTally()
        noKcal.add(at: 0, zone: 2, kcalPerMinute: nil)
        noKcal.add(at: 60, zone: 2, kcalPerMinute: nil)
        #expect(noKcal.kcal == nil)
    }

    @Test("The maximum rises after 30 s held above it, to the lowest value of that run")
    func learner() {
        var l = MaxHeartRateLearner(maximum: 180)
        #expect(l.observe(hr: 185, at: 0) == nil)
        #expect(l.observe(hr: 183, at: 15) == nil)
        // A dip to the maximum restarts the hold.
        #expect(l.observe(hr: 180, at: 20) == nil)
        #expect(l.observe(hr: 186, at: 21) == nil)
        #expect(l.observe(hr: 184, at: 40) == nil)
        #expect(l.observe(hr: 190, at: 51) == 184)
        #expect(l.maximum == 184)
        // One spike is not enough.
        var m = MaxHeartRateLearner(maximum: 180)
        #expect(m.observe(hr: 230, at: 0) == nil)
        #expect(m.observe(hr: 150, at: 1) == nil)
        #expect(m.maximum == 180)
    }
}
