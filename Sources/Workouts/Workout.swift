// SPDX-License-Identifier: MIT

import JSON
import WearMetrics

/// One heart rate of the workout's track, as the exports write it.
public struct WorkoutSample: Sendable, Equatable {
    public var time: UTCTimestamp
    public var heartRate: Int
    /// Metres covered since the workout started, when a machine reported distance.
    public var distanceMeters: Double?

    public init(time: UTCTimestamp, heartRate: Int, distanceMeters: Double? = nil) {
        self.time = time
        self.heartRate = heartRate
        self.distanceMeters = distanceMeters
    }
}

/// A member's workout in one class: the shared workout contract's fields, already rounded
/// as the contract writes them, plus the heart-rate track the FIT and TCX exports need
/// (not part of the JSON).
public struct Workout: Sendable, Equatable {
    public var id: String
    public var clientID: String?
    public var source: String
    public var gatewayID: String
    public var deviceID: String
    public var workoutType: WorkoutType
    /// nil for open gym.
    public var className: String?
    public var startTime: UTCTimestamp
    public var endTime: UTCTimestamp
    public var durationSeconds: Int
    /// kcal, 1 decimal; nil unless weight, age and sex are known.
    public var caloriesActive: Double?
    /// 1 decimal; nil (key omitted) when no machine reported a distance.
    public var distanceMeters: Double?
    /// bpm, 1 decimal.
    public var avgHeartRate: Double
    public var maxHeartRate: Int
    public var minHeartRate: Int
    /// Seconds below zone 1 (and without a recent heart rate), then zones 1…5.
    public var secondsInZone: [Int]
    /// 1 decimal.
    public var effortPoints: Double
    /// 1 decimal.
    public var trimp: Double
    /// ms, 1 decimal; nil (key omitted) when no RR interval was seen.
    public var hrvRMSSDMilliseconds: Double?
    /// 0…1, 3 decimals.
    public var coverage: Double
    public var formulas: WorkoutFormulas
    public var sourceDevice: String
    public var samples: [WorkoutSample]
    /// The maximum and (for Karvonen zones) resting heart rate the zones were computed
    /// with; not in the JSON, the FIT export writes the zones' bounds from them.
    public var zoneMaxHR: Int
    public var zoneRestingHR: Int?

    public init(id: String, clientID: String?, source: String = "blegate", gatewayID: String, deviceID: String,
                workoutType: WorkoutType, className: String?, startTime: UTCTimestamp, endTime: UTCTimestamp,
                durationSeconds: Int, caloriesActive: Double?, distanceMeters: Double?, avgHeartRate: Double,
                maxHeartRate: Int, minHeartRate: Int, secondsInZone: [Int], effortPoints: Double, trimp: Double,
                hrvRMSSDMilliseconds: Double?, coverage: Double, formulas: WorkoutFormulas, sourceDevice: String,
                samples: [WorkoutSample] = [], zoneMaxHR: Int = WorkoutRequest.standardDefaultMaxHR, zoneRestingHR: Int? = nil) {
        self.id = id
        self.clientID = clientID
        self.source = source
        self.gatewayID = gatewayID
        self.deviceID = deviceID
        self.workoutType = workoutType
        self.className = className
        self.startTime = startTime
        self.endTime = endTime
        self.durationSeconds = durationSeconds
        self.caloriesActive = caloriesActive
        self.distanceMeters = distanceMeters
        self.avgHeartRate = avgHeartRate
        self.maxHeartRate = maxHeartRate
        self.minHeartRate = minHeartRate
        self.secondsInZone = secondsInZone
        self.effortPoints = effortPoints
        self.trimp = trimp
        self.hrvRMSSDMilliseconds = hrvRMSSDMilliseconds
        self.coverage = coverage
        self.formulas = formulas
        self.sourceDevice = sourceDevice
        self.samples = samples
        self.zoneMaxHR = zoneMaxHR
        self.zoneRestingHR = zoneRestingHR
    }
}

extension Workout {
    /// The contract's object, keys in contract order.
    public var json: JSONValue {
        var o: [(String, JSONValue)] = []
        o.reserveCapacity(24)
        o.append(("id", .string(id)))
        o.append(("client_id", clientID.map(JSONValue.string) ?? .null))
        o.append(("source", .string(source)))
        o.append(("gateway_id", .string(gatewayID)))
        o.append(("device_id", .string(deviceID)))
        o.append(("workout_type", .string(workoutType.rawValue)))
        o.append(("class_name", className.map(JSONValue.string) ?? .null))
        o.append(("start_time", .string(startTime.iso8601)))
        o.append(("end_time", .string(endTime.iso8601)))
        o.append(("duration_seconds", .int(durationSeconds)))
        o.append(("calories_active", caloriesActive.map(JSONValue.double) ?? .null))
        if let d = distanceMeters { o.append(("distance_meters", .double(d))) }
        o.append(("avg_heart_rate", .double(avgHeartRate)))
        o.append(("max_heart_rate", .int(maxHeartRate)))
        o.append(("min_heart_rate", .int(minHeartRate)))
        o.append(("seconds_in_zone", .array(secondsInZone.map(JSONValue.int))))
        o.append(("effort_points", .double(effortPoints)))
        o.append(("trimp", .double(trimp)))
        if let h = hrvRMSSDMilliseconds { o.append(("hrv_rmssd_ms", .double(h))) }
        o.append(("coverage", .double(coverage)))
        o.append(("formulas", .object([
            ("zones", .string(formulas.zones)),
            ("kcal", .string(formulas.kcal)),
            ("points", .string(formulas.points)),
        ])))
        o.append(("source_device", .string(sourceDevice)))
        return .object(o)
    }

    /// Compact JSON text of `json`.
    public var jsonString: String { json.serialized() }
}

/// Rounds half away from zero to `decimals` places (the contract's 1 or 3 decimals).
@inline(__always)
func rounded(_ x: Double, decimals: Int) -> Double {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    return (x * scale).rounded() / scale
}
