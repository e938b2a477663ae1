// SPDX-License-Identifier: MIT

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
    /// 1 decimal; nil (written as null) when no machine reported a distance.
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

extension Workout: Encodable {
    enum CodingKeys: String, CodingKey {
        case id, clientID = "client_id", source, gatewayID = "gateway_id", deviceID = "device_id", workoutType = "workout_type"
        case className = "class_name", startTime = "start_time", endTime = "end_time", durationSeconds = "duration_seconds"
        case caloriesActive = "calories_active", distanceMeters = "distance_meters", avgHeartRate = "avg_heart_rate"
        case maxHeartRate = "max_heart_rate", minHeartRate = "min_heart_rate", secondsInZone = "seconds_in_zone"
        case effortPoints = "effort_points", trimp, hrvRMSSDMilliseconds = "hrv_rmssd_ms", coverage, formulas
        case sourceDevice = "source_device"
    }

    /// The contract's object: `client_id`, `class_name`, `calories_active` and
    /// `distance_meters` written as null when unknown, `hrv_rmssd_ms` left out; the track
    /// and the zones' bounds are not part of it.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(source, forKey: .source)
        try c.encode(gatewayID, forKey: .gatewayID)
        try c.encode(deviceID, forKey: .deviceID)
        try c.encode(workoutType.rawValue, forKey: .workoutType)
        try c.encode(className, forKey: .className)
        try c.encode(startTime.iso8601, forKey: .startTime)
        try c.encode(endTime.iso8601, forKey: .endTime)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(caloriesActive, forKey: .caloriesActive)
        try c.encode(distanceMeters, forKey: .distanceMeters)
        try c.encode(avgHeartRate, forKey: .avgHeartRate)
        try c.encode(maxHeartRate, forKey: .maxHeartRate)
        try c.encode(minHeartRate, forKey: .minHeartRate)
        try c.encode(secondsInZone, forKey: .secondsInZone)
        try c.encode(effortPoints, forKey: .effortPoints)
        try c.encode(trimp, forKey: .trimp)
        try c.encodeIfPresent(hrvRMSSDMilliseconds, forKey: .hrvRMSSDMilliseconds)
        try c.encode(coverage, forKey: .coverage)
        try c.encode(formulas, forKey: .formulas)
        try c.encode(sourceDevice, forKey: .sourceDevice)
    }

    /// Compact JSON text, keys sorted (the document the cache stores and sync sends).
    /// Encoding plain strings and finite numbers cannot fail.
    public var jsonString: String {
        String(decoding: (try? Self.encoder().encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// Sorted keys for text that is the same for the same workout (the cache stores a
    /// recomputed workout again only when its text changed); slashes as they are.
    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }
}

/// Rounds half away from zero to `decimals` places (the contract's 1 or 3 decimals).
@inline(__always)
func rounded(_ x: Double, decimals: Int) -> Double {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    return (x * scale).rounded() / scale
}
