// SPDX-License-Identifier: MIT
import JSON
import WearMetrics

/// Why a stored workout could not be read back.
public struct WorkoutReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
}

extension Workout {
    /// A workout as it was sent (its contract JSON), with the heart-rate track taken
    /// again from the strap's records: the exports then show exactly the figures the
    /// backend holds. The zones' bounds are not in the JSON: the caller gives them
    /// (`WorkoutBuilder.zoneBounds` of the member's profile). `machines`: the records of
    /// the member's machines, whose distance goes on the track as it did in the workout.
    public init(json: JSONValue, records: [WearMetrics], machines: [WearMetrics] = [], zoneMaxHR: Int,
                zoneRestingHR: Int?) throws(WorkoutReadError) {
        func string(_ key: String) throws(WorkoutReadError) -> String {
            guard let s = json[key]?.stringValue else { throw WorkoutReadError(description: "\(key) is missing or not a string") }
            return s
        }
        func number(_ key: String) throws(WorkoutReadError) -> Double {
            guard let d = json[key]?.doubleValue else { throw WorkoutReadError(description: "\(key) is missing or not a number") }
            return d
        }
        func time(_ key: String) throws(WorkoutReadError) -> UTCTimestamp {
            guard let t = UTCTimestamp(iso8601: try string(key)) else { throw WorkoutReadError(description: "\(key) is not an ISO 8601 time") }
            return t
        }
        guard let type = WorkoutType(rawValue: try string("workout_type")) else {
            throw WorkoutReadError(description: "workout_type is not one of \(WorkoutType.allCases.map(\.rawValue))")
        }
        guard case let .array(zoneValues)? = json["seconds_in_zone"], zoneValues.count == 6 else {
            throw WorkoutReadError(description: "seconds_in_zone is not 6 numbers")
        }
        let zones = zoneValues.compactMap { $0.doubleValue.map { Int($0) } }
        guard zones.count == 6 else { throw WorkoutReadError(description: "seconds_in_zone is not 6 numbers") }
        let start = try time("start_time"), end = try time("end_time")
        func within(_ list: [WearMetrics]) -> [WearMetrics] {
            list.filter {
                $0.timestamp.millisecondsSince1970 >= start.millisecondsSince1970 && $0.timestamp.millisecondsSince1970 <= end.millisecondsSince1970
            }.sorted { $0.timestamp.millisecondsSince1970 < $1.timestamp.millisecondsSince1970 }
        }
        let inside = within(records)
        let readings = within(inside.filter { DistanceReading($0) != nil } + machines.filter { DistanceReading($0) != nil })
        let formulas = json["formulas"]
        self.init(id: try string("id"), clientID: json["client_id"]?.stringValue, source: try string("source"),
                  gatewayID: try string("gateway_id"), deviceID: try string("device_id"), workoutType: type,
                  className: json["class_name"]?.stringValue, startTime: start, endTime: end,
                  durationSeconds: Int(try number("duration_seconds")), caloriesActive: json["calories_active"]?.doubleValue,
                  distanceMeters: json["distance_meters"]?.doubleValue, avgHeartRate: try number("avg_heart_rate"),
                  maxHeartRate: Int(try number("max_heart_rate")), minHeartRate: Int(try number("min_heart_rate")),
                  secondsInZone: zones, effortPoints: try number("effort_points"), trimp: try number("trimp"),
                  hrvRMSSDMilliseconds: json["hrv_rmssd_ms"]?.doubleValue, coverage: try number("coverage"),
                  formulas: WorkoutFormulas(zones: formulas?["zones"]?.stringValue ?? "", kcal: formulas?["kcal"]?.stringValue ?? "",
                                            points: formulas?["points"]?.stringValue ?? ""),
                  sourceDevice: json["source_device"]?.stringValue ?? "", samples: WorkoutBuilder.samples(inside, distance: readings),
                  zoneMaxHR: zoneMaxHR, zoneRestingHR: zoneRestingHR)
    }
}
