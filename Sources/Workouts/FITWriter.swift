// SPDX-License-Identifier: MIT

import Effort
import WearMetrics

/// A workout as a FIT activity file (Garmin FIT SDK profile: file_id, device_info,
/// event, record, lap, time_in_zone, session, activity), the format Garmin Connect and
/// Strava import with every figure intact. Returns the bytes; writing them is the caller's.
public enum FITWriter {
    /// Seconds from the Unix epoch to FIT's, 1989-12-31T00:00:00Z.
    static let fitEpochOffset: Int64 = 631_065_600
    static let manufacturerDevelopment: UInt16 = 255

    // Global message numbers.
    static let fileID: UInt16 = 0, session: UInt16 = 18, lap: UInt16 = 19, record: UInt16 = 20, event: UInt16 = 21
    static let deviceInfo: UInt16 = 23, activity: UInt16 = 34, timeInZone: UInt16 = 216

    public static func encode(_ workout: Workout) -> [UInt8] {
        var e = FITEncoder()
        let start = timestamp(workout.startTime)
        let end = timestamp(workout.endTime)
        let elapsedMs = UInt32(clamping: workout.durationSeconds * 1000)
        let (sport, subSport) = sports(workout.workoutType)
        let zonesMs = workout.secondsInZone.map { UInt32(clamping: $0 * 1000) }
        let calories = workout.caloriesActive.map { UInt16(clamping: Int($0.rounded())) }
        let distanceCm = workout.distanceMeters.map { UInt32(clamping: Int(($0 * 100).rounded())) }
        let serial = serialNumber(workout.deviceID)

        e.write(global: fileID, local: 0, fields: [
            (0, .enumeration(4)),                                   // type: activity
            (1, .uint16(manufacturerDevelopment)),
            (2, .uint16(1)),                                        // product
            (3, .uint32z(serial)),
            (4, .uint32(start)),                                    // time_created
        ])
        e.write(global: deviceInfo, local: 1, fields: [
            (253, .uint32(start)),
            (0, .uint8(0)),                                         // device_index: the creator
            (2, .uint16(manufacturerDevelopment)),
            (27, .string(workout.sourceDevice, size: 32)),          // product_name
        ])
        e.write(global: event, local: 2, fields: [
            (253, .uint32(start)), (0, .enumeration(0)), (1, .enumeration(0)), (4, .uint8(0)),   // timer start
        ])
        for s in workout.samples {
            var fields: [(number: UInt8, value: FITEncoder.Value)] = [
                (253, .uint32(timestamp(s.time))),
                (3, .uint8(UInt8(clamping: min(max(s.heartRate, 0), 254)))),
            ]
            if workout.distanceMeters != nil {
                // Before a machine's first reading the field is FIT's "invalid".
                fields.append((5, .uint32(s.distanceMeters.map { UInt32(clamping: Int(($0 * 100).rounded())) } ?? .max)))
            }
            e.write(global: record, local: 3, fields: fields)
        }
        e.write(global: event, local: 2, fields: [
            (253, .uint32(end)), (0, .enumeration(0)), (1, .enumeration(4)), (4, .uint8(0)),     // timer stop_all
        ])

        let avg = UInt8(clamping: Int(workout.avgHeartRate.rounded()))
        let maxHR = UInt8(clamping: workout.maxHeartRate)
        let minHR = UInt8(clamping: workout.minHeartRate)
        var lapFields: [(number: UInt8, value: FITEncoder.Value)] = [
            (253, .uint32(end)),
            (0, .enumeration(9)),                                   // event: lap
            (1, .enumeration(1)),                                   // event_type: stop
            (2, .uint32(start)),
            (7, .uint32(elapsedMs)),                                // total_elapsed_time
            (8, .uint32(elapsedMs)),                                // total_timer_time
            (15, .uint8(avg)), (16, .uint8(maxHR)), (63, .uint8(minHR)),
            (23, .enumeration(0)),                                  // intensity: active
            (24, .enumeration(7)),                                  // lap_trigger: session_end
            (25, .enumeration(sport)), (39, .enumeration(subSport)),
            (57, .uint32Array(zonesMs)),                            // time_in_hr_zone
            (254, .uint16(0)),                                      // message_index
        ]
        if let d = distanceCm { lapFields.append((9, .uint32(d))) }
        if let c = calories { lapFields.append((11, .uint16(c))) }
        e.write(global: lap, local: 4, fields: lapFields)

        var zoneFields: [(number: UInt8, value: FITEncoder.Value)] = [
            (253, .uint32(end)),
            (0, .uint16(session)),                                  // reference_mesg
            (1, .uint16(0)),                                        // reference_index
            (2, .uint32Array(zonesMs)),
            (6, .uint8Array(zoneHighBounds(max: workout.zoneMaxHR, resting: workout.zoneRestingHR).map { UInt8(clamping: $0) })),
            (10, .enumeration(workout.zoneRestingHR == nil ? 1 : 2)),   // hr_calc_type: percent_max_hr, percent_hrr
            (11, .uint8(UInt8(clamping: workout.zoneMaxHR))),
        ]
        if let r = workout.zoneRestingHR { zoneFields.append((12, .uint8(UInt8(clamping: r)))) }
        e.write(global: timeInZone, local: 5, fields: zoneFields)

        var sessionFields: [(number: UInt8, value: FITEncoder.Value)] = [
            (253, .uint32(end)),
            (0, .enumeration(8)),                                   // event: session
            (1, .enumeration(1)),                                   // event_type: stop
            (2, .uint32(start)),
            (5, .enumeration(sport)), (6, .enumeration(subSport)),
            (7, .uint32(elapsedMs)), (8, .uint32(elapsedMs)),
            (16, .uint8(avg)), (17, .uint8(maxHR)), (64, .uint8(minHR)),
            (25, .uint16(0)),                                       // first_lap_index
            (26, .uint16(1)),                                       // num_laps
            (28, .enumeration(0)),                                  // trigger: activity_end
            (65, .uint32Array(zonesMs)),                            // time_in_hr_zone
            (254, .uint16(0)),
        ]
        if let d = distanceCm { sessionFields.append((9, .uint32(d))) }
        if let c = calories { sessionFields.append((11, .uint16(c))) }
        e.write(global: session, local: 6, fields: sessionFields)

        e.write(global: activity, local: 7, fields: [
            (253, .uint32(end)),
            (0, .uint32(elapsedMs)),                                // total_timer_time
            (1, .uint16(1)),                                        // num_sessions
            (2, .enumeration(0)),                                   // type: manual
            (3, .enumeration(26)),                                  // event: activity
            (4, .enumeration(1)),                                   // event_type: stop
        ])
        return e.file()
    }

    /// The highest whole heart rate of each of the six zones (index 0, zones 1–5), as
    /// `HeartRateZone` places them: one below the first bpm of the next zone, the maximum
    /// for zone 5.
    static func zoneHighBounds(max: Int, resting: Int?) -> [Int] {
        let m = Double(max), r = resting.map(Double.init)
        var bounds: [Int] = []
        for (i, share) in HeartRateZone.boundaries.enumerated() {
            // Start just below the exact target and step up, so rounding in the target
            // cannot disagree with the zone the workout gave that bpm.
            var hr = Swift.max(Int(HeartRateZone.target(share: share, max: m, resting: r).rounded(.down)) - 1, 0)
            while HeartRateZone.zone(hr: Double(hr), max: m, resting: r) < i + 1 { hr += 1 }
            bounds.append(hr - 1)
        }
        bounds.append(max)
        return bounds
    }

    /// FIT `sport` and `sub_sport` of a workout type.
    static func sports(_ type: WorkoutType) -> (UInt8, UInt8) {
        switch type {
        case .run: (1, 0)              // running, generic
        case .walk: (11, 0)            // walking
        case .cycle: (2, 0)            // cycling
        case .strength: (10, 20)       // training, strength_training
        case .hiit: (62, 70)           // hiit, hiit
        case .other: (0, 0)            // generic
        }
    }

    /// Whole seconds since FIT's epoch (FIT's date_time).
    static func timestamp(_ t: UTCTimestamp) -> UInt32 {
        var seconds = t.millisecondsSince1970 / 1000
        if t.millisecondsSince1970 < 0, t.millisecondsSince1970 % 1000 != 0 { seconds -= 1 }
        return UInt32(clamping: seconds - fitEpochOffset)
    }

    /// A stable, non-zero serial number for the strap (FNV-1a of its device id), so files
    /// from one strap are recognised as one device.
    static func serialNumber(_ deviceID: String) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for b in deviceID.utf8 { h = (h ^ UInt32(b)) &* 16_777_619 }
        return h == 0 ? 1 : h
    }
}
