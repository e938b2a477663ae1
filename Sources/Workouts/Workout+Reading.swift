// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WearMetrics

/// Why a stored workout could not be read back.
public struct WorkoutReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
}

extension Workout {
    /// A workout as it was sent (its contract JSON text), with the heart-rate track taken
    /// again from the strap's records: the exports then show exactly the figures the
    /// backend holds. The zones' bounds are not in the JSON: the caller gives them
    /// (`WorkoutBuilder.zoneBounds` of the member's profile). `machines`: the records of
    /// the member's machines, whose distance goes on the track as it did in the workout.
    public init(json text: String, records: [WearMetrics] = [], machines: [WearMetrics] = [], zoneMaxHR: Int,
                zoneRestingHR: Int?) throws(WorkoutReadError) {
        let c: Contract
        do {
            c = try JSONDecoder().decode(Contract.self, from: Data(text.utf8))
        } catch let error as WorkoutReadError {
            throw error
        } catch let DecodingError.keyNotFound(key, _) {
            throw WorkoutReadError(description: "\(key.stringValue) is missing")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw WorkoutReadError(description: "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type")
        } catch {
            throw WorkoutReadError(description: "not a workout: \(error)")
        }
        guard let type = WorkoutType(rawValue: c.workoutType) else {
            throw WorkoutReadError(description: "workout_type is not one of \(WorkoutType.allCases.map(\.rawValue))")
        }
        guard c.secondsInZone.count == 6 else { throw WorkoutReadError(description: "seconds_in_zone is not 6 numbers") }
        guard let start = UTCTimestamp(iso8601: c.startTime) else { throw WorkoutReadError(description: "start_time is not an ISO 8601 time") }
        guard let end = UTCTimestamp(iso8601: c.endTime) else { throw WorkoutReadError(description: "end_time is not an ISO 8601 time") }
        self.init(id: c.id, clientID: c.clientID, source: c.source, gatewayID: c.gatewayID, deviceID: c.deviceID, workoutType: type,
                  className: c.className, startTime: start, endTime: end, durationSeconds: Int(c.durationSeconds),
                  caloriesActive: c.caloriesActive, distanceMeters: c.distanceMeters, avgHeartRate: c.avgHeartRate,
                  maxHeartRate: Int(c.maxHeartRate), minHeartRate: Int(c.minHeartRate), secondsInZone: c.secondsInZone.map { Int($0) },
                  effortPoints: c.effortPoints, trimp: c.trimp, hrvRMSSDMilliseconds: c.hrvRMSSDMilliseconds, coverage: c.coverage,
                  formulas: c.formulas ?? WorkoutFormulas(zones: "", kcal: "", points: ""), sourceDevice: c.sourceDevice ?? "",
                  zoneMaxHR: zoneMaxHR, zoneRestingHR: zoneRestingHR)
        takeTrack(records: records, machines: machines)
    }

    /// Sets `samples` from the strap's records (and the member's machines' distance) within
    /// the workout's start and end.
    public mutating func takeTrack(records: [WearMetrics], machines: [WearMetrics] = []) {
        let start = startTime.millisecondsSince1970, end = endTime.millisecondsSince1970
        func within(_ list: [WearMetrics]) -> [WearMetrics] {
            list.filter { $0.timestamp.millisecondsSince1970 >= start && $0.timestamp.millisecondsSince1970 <= end }
                .sorted { $0.timestamp.millisecondsSince1970 < $1.timestamp.millisecondsSince1970 }
        }
        let inside = within(records)
        let readings = within(inside.filter { DistanceReading($0) != nil } + machines.filter { DistanceReading($0) != nil })
        samples = WorkoutBuilder.samples(inside, distance: readings)
    }

    /// The contract's fields as the JSON holds them; whole numbers read as numbers (a
    /// backend may have written 60.0).
    private struct Contract: Decodable {
        var id: String
        var clientID: String?
        var source: String
        var gatewayID: String
        var deviceID: String
        var workoutType: String
        var className: String?
        var startTime: String
        var endTime: String
        var durationSeconds: Double
        var caloriesActive: Double?
        var distanceMeters: Double?
        var avgHeartRate: Double
        var maxHeartRate: Double
        var minHeartRate: Double
        var secondsInZone: [Double]
        var effortPoints: Double
        var trimp: Double
        var hrvRMSSDMilliseconds: Double?
        var coverage: Double
        var formulas: WorkoutFormulas?
        var sourceDevice: String?

        enum CodingKeys: String, CodingKey {
            case id, clientID = "client_id", source, gatewayID = "gateway_id", deviceID = "device_id", workoutType = "workout_type"
            case className = "class_name", startTime = "start_time", endTime = "end_time", durationSeconds = "duration_seconds"
            case caloriesActive = "calories_active", distanceMeters = "distance_meters", avgHeartRate = "avg_heart_rate"
            case maxHeartRate = "max_heart_rate", minHeartRate = "min_heart_rate", secondsInZone = "seconds_in_zone"
            case effortPoints = "effort_points", trimp, hrvRMSSDMilliseconds = "hrv_rmssd_ms", coverage, formulas
            case sourceDevice = "source_device"
        }
    }
}
