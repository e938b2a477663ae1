// SPDX-License-Identifier: MIT

import Effort
import WearMetrics
import Workouts

/// 2026-11-25T10:00:00.000Z: the fixtures' class starts here.
let classStart: Int64 = 1_795_600_800_000

/// A heart-rate record `seconds` after `classStart`, as the normalizer makes them: `hr`
/// omitted (and `meta.hr_status` set) for 0 or lost contact.
func strapRecord(_ seconds: Double, hr: Double, contact: String = "detected", rr: [Double]? = nil,
                 device: String = "AA:BB:CC:DD:EE:01") -> WearMetrics {
    var metrics = KeyValueList<Double>()
    var meta = KeyValueList<String>()
    if hr > 0, contact != "not_detected" { metrics["hr"] = hr }
    meta["sensor_contact"] = contact
    if hr == 0 { meta["hr_status"] = "no_reading" } else if contact == "not_detected" { meta["hr_status"] = "no_contact" }
    return WearMetrics(timestamp: at(seconds), deviceID: device, source: "ble_hrm", metrics: metrics, meta: meta, rrIntervals: rr)
}

/// A treadmill's record with its cumulative distance.
func machineRecord(_ seconds: Double, distance: Double, device: String = "treadmill-1") -> WearMetrics {
    var metrics = KeyValueList<Double>()
    metrics["distance_m"] = distance
    return WearMetrics(timestamp: at(seconds), deviceID: device, source: "ble_ftms", metrics: metrics)
}

func at(_ seconds: Double) -> UTCTimestamp {
    UTCTimestamp(millisecondsSince1970: classStart + Int64((seconds * 1000).rounded()))
}

func request(profile: MemberProfile? = nil, type: WorkoutType = .run, className: String? = "Spin 10:00",
             windowSeconds: Double = 3600, defaultMaxHR: Int = WorkoutRequest.standardDefaultMaxHR) -> WorkoutRequest {
    WorkoutRequest(
        id: "6f1c1f8e-3b7a-5c1e-9d2a-0b6f4e8a1c3d", clientID: "member-42", gatewayID: "gw-1",
        deviceID: "AA:BB:CC:DD:EE:01", workoutType: type, className: className, sourceDevice: "Polar H10",
        windowStart: at(0), windowEnd: at(windowSeconds), profile: profile, defaultMaxHR: defaultMaxHR)
}

/// One heart rate per second from `from` to `to` inclusive.
func steady(_ hr: Double, from: Int, to: Int) -> [WearMetrics] {
    (from...to).map { strapRecord(Double($0), hr: hr) }
}
