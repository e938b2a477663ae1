// SPDX-License-Identifier: MIT

import Effort
import Foundation
import Testing
import WearMetrics
@testable import Workouts

/// The contract's exact text: keys sorted, numbers rounded as it says.
@Suite struct WorkoutJSONTests {
    /// One minute at 150 bpm for a man of 30 years, 80 kg, max 190 (no resting rate):
    /// 150/190 = 79 % (zone 3 all 60 s, 3 points), Keytel 14.697 kcal, TRIMP with the
    /// default rest 60: r = 90/130, 1 × r × 0.64 e^(1.92 r) = 1.674; RR 800/820 → RMSSD 20;
    /// a treadmill from 1000 m to 1200 m.
    static func fullWorkout() throws -> Workout {
        let rr = (0...60).map { strapRecord(Double($0), hr: 150, rr: [$0 % 2 == 0 ? 800 : 820]) }
        let machine = [machineRecord(0.5, distance: 1000), machineRecord(59.5, distance: 1200)]
        let profile = MemberProfile(age: 30, maxHR: 190, weightKg: 80, sex: .male)
        return try #require(WorkoutBuilder.build(request(profile: profile), records: rr + machine))
    }

    @Test func fullWorkoutText() throws {
        let expected = """
            {"avg_heart_rate":150,"calories_active":14.7,"class_name":"Spin 10:00","client_id":"member-42",\
            "coverage":1,"device_id":"AA:BB:CC:DD:EE:01","distance_meters":200,"duration_seconds":60,\
            "effort_points":3,"end_time":"2026-11-25T10:01:00.000Z","formulas":{"kcal":"keytel-2005/v1",\
            "points":"blegate-points/v1","zones":"pct-max-50-60-70-80-90/v1"},"gateway_id":"gw-1",\
            "hrv_rmssd_ms":20,"id":"6f1c1f8e-3b7a-5c1e-9d2a-0b6f4e8a1c3d","max_heart_rate":150,\
            "min_heart_rate":150,"seconds_in_zone":[0,0,0,60,0,0],"source":"blegate","source_device":"Polar H10",\
            "start_time":"2026-11-25T10:00:00.000Z","trimp":1.7,"workout_type":"run"}
            """
        #expect(try Self.fullWorkout().jsonString == expected)
    }

    /// Open gym, unpaired strap, no machine, no RR, no profile: nulls written (distance and
    /// kcal included), RMSSD left out. Heard at 0 and 20 s at 150 bpm (max 185): 16 s zone 4 (16 × 4 / 60 =
    /// 1.07 points), 4 s index 0,
    /// average 150, coverage 1/20; TRIMP with rest 60, max 185, sex unknown:
    /// r = 90/125 = 0.72, 20/60 × 0.72 × mean(0.64 e^1.3824, 0.86 e^1.2024) = 0.649.
    @Test func openGymText() throws {
        var req = request(type: .other, className: nil)
        req.clientID = nil
        let w = try #require(WorkoutBuilder.build(req, records: [strapRecord(0, hr: 150), strapRecord(20, hr: 150)]))
        let expected = """
            {"avg_heart_rate":150,"calories_active":null,"class_name":null,"client_id":null,"coverage":0.05,\
            "device_id":"AA:BB:CC:DD:EE:01","distance_meters":null,"duration_seconds":20,"effort_points":1.1,\
            "end_time":"2026-11-25T10:00:20.000Z","formulas":{"kcal":"keytel-2005/v1","points":"blegate-points/v1",\
            "zones":"pct-max-50-60-70-80-90/v1"},"gateway_id":"gw-1","id":"6f1c1f8e-3b7a-5c1e-9d2a-0b6f4e8a1c3d",\
            "max_heart_rate":150,"min_heart_rate":150,"seconds_in_zone":[4,0,0,0,16,0],"source":"blegate",\
            "source_device":"Polar H10","start_time":"2026-11-25T10:00:00.000Z","trimp":0.6,"workout_type":"other"}
            """
        #expect(w.jsonString == expected)
    }

    @Test func everyContractKeyOnceInSortedOrder() throws {
        let text = try Self.fullWorkout().jsonString
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]).keys
        #expect(Set(keys) == [
            "id", "client_id", "source", "gateway_id", "device_id", "workout_type", "class_name", "start_time",
            "end_time", "duration_seconds", "calories_active", "distance_meters", "avg_heart_rate", "max_heart_rate",
            "min_heart_rate", "seconds_in_zone", "effort_points", "trimp", "hrv_rmssd_ms", "coverage", "formulas",
            "source_device",
        ])
        let positions = keys.sorted().map { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil } && positions == positions.sorted { $0! < $1! })
    }

    @Test func decimalsAreRoundedAsTheContractSays() throws {
        // 7 heard values summing to 918: 131.142… → 131.1; 5 of 7 seconds covered → 0.714.
        let hrs: [Double] = [120, 125, 130, 135, 140, 133, 135]
        let times: [Double] = [0, 1, 2, 5.5, 5.9, 6.2, 7]
        let w = try #require(WorkoutBuilder.build(request(), records: zip(times, hrs).map { strapRecord($0, hr: $1) }))
        #expect(w.avgHeartRate == 131.1)
        #expect(w.durationSeconds == 7)
        #expect(w.coverage == 0.714)   // seconds 0, 1, 2, 5, 6 of 7
        #expect(w.jsonString.contains("\"avg_heart_rate\":131.1,"))
        #expect(w.jsonString.contains("\"coverage\":0.714,"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(w.jsonString.utf8)) as? [String: Any])
        #expect(parsed["avg_heart_rate"] as? Double == 131.1)
        #expect(parsed["seconds_in_zone"] as? [Int] == w.secondsInZone)
    }
}
