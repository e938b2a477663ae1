// SPDX-License-Identifier: MIT

/// A workout as a Garmin Training Center Database v2 document (TCX): one Activity with one
/// Lap and its Track, the XML form Strava and Garmin Connect import besides FIT.
public enum TCXWriter {
    public static let namespace = "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"

    public static func document(_ workout: Workout) -> String {
        var x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        x += "<TrainingCenterDatabase xmlns=\"\(namespace)\">\n"
        x += "  <Activities>\n"
        x += "    <Activity Sport=\"\(sport(workout.workoutType))\">\n"
        x += "      <Id>\(workout.startTime.iso8601)</Id>\n"
        x += "      <Lap StartTime=\"\(workout.startTime.iso8601)\">\n"
        x += "        <TotalTimeSeconds>\(workout.durationSeconds)</TotalTimeSeconds>\n"
        x += "        <DistanceMeters>\(number(workout.distanceMeters ?? 0))</DistanceMeters>\n"
        // The schema requires Calories; 0 when the member's weight, age or sex is unknown.
        x += "        <Calories>\(min(max(Int((workout.caloriesActive ?? 0).rounded()), 0), 65535))</Calories>\n"
        x += "        <AverageHeartRateBpm><Value>\(bpm(Int(workout.avgHeartRate.rounded())))</Value></AverageHeartRateBpm>\n"
        x += "        <MaximumHeartRateBpm><Value>\(bpm(workout.maxHeartRate))</Value></MaximumHeartRateBpm>\n"
        x += "        <Intensity>Active</Intensity>\n"
        x += "        <TriggerMethod>Manual</TriggerMethod>\n"
        if !workout.samples.isEmpty {
            x += "        <Track>\n"
            for s in workout.samples {
                x += "          <Trackpoint><Time>\(s.time.iso8601)</Time>"
                if let d = s.distanceMeters { x += "<DistanceMeters>\(number(d))</DistanceMeters>" }
                x += "<HeartRateBpm><Value>\(bpm(s.heartRate))</Value></HeartRateBpm></Trackpoint>\n"
            }
            x += "        </Track>\n"
        }
        x += "      </Lap>\n"
        if let name = workout.className { x += "      <Notes>\(escaped(name))</Notes>\n" }
        x += "    </Activity>\n"
        x += "  </Activities>\n"
        x += "</TrainingCenterDatabase>\n"
        return x
    }

    /// TCX knows only these three sports.
    static func sport(_ type: WorkoutType) -> String {
        switch type {
        case .run: "Running"
        case .cycle: "Biking"
        case .walk, .strength, .hiit, .other: "Other"
        }
    }

    /// The schema's heart rate is an unsignedByte of at least 1.
    static func bpm(_ v: Int) -> Int { min(max(v, 1), 255) }

    static func number(_ d: Double) -> String {
        let r = (d * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    static func escaped(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default:
                // XML 1.0 has no representation for most control characters.
                if ch.value < 0x20, ch != "\t", ch != "\n", ch != "\r" { out += " " } else { out.unicodeScalars.append(ch) }
            }
        }
        return out
    }
}
