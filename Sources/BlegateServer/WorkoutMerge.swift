// SPDX-License-Identifier: MIT
import Outbox
import BackendContract

/// One member's workout of one class as heard by several gateways, made into one
/// (docs/server.md, "Workouts heard by two gateways").
///
/// Two source workouts that overlap by at least half of the shorter one heard the same
/// effort (a strap in range of two rooms' gateways): the merged workout takes the sums
/// (duration, zones, kcal, points, TRIMP, distance) and averages from the source that
/// covered more of it, not their total. Otherwise they heard successive parts (a member
/// who moved rooms): sums add up and averages are weighted by duration. Either way the
/// merged workout runs from the earliest start to the latest end, with the highest max
/// and the lowest min heart rate.
enum WorkoutMerge {
    struct Part {
        var start: Double
        var end: Double
        var startText: String
        var endText: String
        var duration: Double
        var calories: Double?
        var distance: Double?
        var avgHR: Double
        var maxHR: Double
        var minHR: Double
        var zones: [Double]
        var points: Double
        var trimp: Double
        var rmssd: Double?
        var coverage: Double
        var ids: [String]
        var gateways: [String]
        var body: ContractValue

        init?(_ w: ContractValue) {
            guard let s = w["start_time"]?.string, let e = w["end_time"]?.string,
                  let start = ContractTimestamp.secondsSince1970(s), let end = ContractTimestamp.secondsSince1970(e) else { return nil }
            self.start = start
            self.end = end
            startText = s
            endText = e
            duration = w["duration_seconds"]?.number ?? (end - start)
            calories = w["calories_active"]?.number
            distance = w["distance_meters"]?.number
            avgHR = w["avg_heart_rate"]?.number ?? 0
            maxHR = w["max_heart_rate"]?.number ?? 0
            minHR = w["min_heart_rate"]?.number ?? 0
            if case let .array(z)? = w["seconds_in_zone"] { zones = z.map { $0.number ?? 0 } } else { zones = [] }
            points = w["effort_points"]?.number ?? 0
            trimp = w["trimp"]?.number ?? 0
            rmssd = w["hrv_rmssd_ms"]?.number
            coverage = w["coverage"]?.number ?? 1
            ids = [w["id"]?.string ?? ""]
            gateways = [w["gateway_id"]?.string ?? ""]
            body = w
        }

        var weight: Double { duration * coverage }
    }

    /// The merged workout of `sources` (at least one), keyed `id`.
    static func merge(id: String, sources: [ContractValue]) -> MergedWorkout? {
        let parts = sources.compactMap(Part.init).sorted { ($0.start, $0.ids[0]) < ($1.start, $1.ids[0]) }
        guard var acc = parts.first else { return nil }
        for p in parts.dropFirst() { acc = combine(acc, p) }
        return json(acc, id: id)
    }

    static func combine(_ a: Part, _ b: Part) -> Part {
        let overlap = min(a.end, b.end) - max(a.start, b.start)
        let shorter = min(a.end - a.start, b.end - b.start)
        var out: Part
        if overlap > 0, overlap >= shorter / 2 {
            out = a.weight >= b.weight ? a : b
        } else {
            out = a
            let total = a.duration + b.duration
            func weighted(_ x: Double, _ y: Double) -> Double { total > 0 ? (x * a.duration + y * b.duration) / total : x }
            out.duration = total
            out.calories = a.calories.flatMap { x in b.calories.map { x + $0 } }
            out.distance = (a.distance == nil && b.distance == nil) ? nil : (a.distance ?? 0) + (b.distance ?? 0)
            out.avgHR = weighted(a.avgHR, b.avgHR)
            out.zones = a.zones.count == b.zones.count ? zip(a.zones, b.zones).map(+) : a.zones
            out.points = a.points + b.points
            out.trimp = a.trimp + b.trimp
            out.rmssd = a.rmssd.flatMap { x in b.rmssd.map { weighted(x, $0) } } ?? a.rmssd ?? b.rmssd
            out.coverage = weighted(a.coverage, b.coverage)
        }
        if b.start < a.start || (b.start == a.start && b.startText < a.startText) { out.start = b.start; out.startText = b.startText }
        else { out.start = a.start; out.startText = a.startText }
        if b.end > a.end { out.end = b.end; out.endText = b.endText } else { out.end = a.end; out.endText = a.endText }
        out.maxHR = max(a.maxHR, b.maxHR)
        out.minHR = min(a.minHR, b.minHR)
        out.ids = a.ids + b.ids
        out.gateways = Array(Set(a.gateways + b.gateways)).sorted()
        return out
    }

    static func json(_ p: Part, id: String) -> MergedWorkout {
        func r1(_ x: Double) -> Double { (x * 10).rounded() / 10 }
        let b = p.body
        return MergedWorkout(
            id: id, clientID: b["client_id"]?.string, gatewayIDs: p.gateways, deviceID: b["device_id"]?.string,
            workoutType: b["workout_type"]?.string, className: b["class_name"]?.string, startTime: p.startText, endTime: p.endText,
            durationSeconds: Int(p.duration.rounded()), caloriesActive: p.calories.map(r1), distanceMeters: p.distance.map(r1),
            avgHeartRate: r1(p.avgHR), maxHeartRate: Int(p.maxHR), minHeartRate: Int(p.minHR),
            secondsInZone: p.zones.map { Int($0.rounded()) }, effortPoints: r1(p.points), trimp: r1(p.trimp),
            hrvRMSSDms: p.rmssd.map(r1), coverage: (p.coverage * 1000).rounded() / 1000, formulas: b["formulas"] ?? .null,
            sourceDevice: b["source_device"]?.string, sources: p.ids
        )
    }
}

/// A member's merged workout as the server stores it (`merged_workouts.body`) and the read
/// endpoints answer it: a contract `Workout` with `gateway_ids` and `sources` instead of
/// `gateway_id`, and `source` always `blegate`.
struct MergedWorkout: Codable, Equatable {
    var id: String
    var clientID: String?
    var source = "blegate"
    var gatewayIDs: [String]
    var deviceID: String?
    var workoutType: String?
    var className: String?
    var startTime: String
    var endTime: String
    var durationSeconds: Int
    var caloriesActive: Double?
    /// Left out, not null, when no source had one (as in a gateway's workout).
    var distanceMeters: Double?
    var avgHeartRate: Double
    var maxHeartRate: Int
    var minHeartRate: Int
    var secondsInZone: [Int]
    var effortPoints: Double
    var trimp: Double
    /// Left out, not null, when no source had one.
    var hrvRMSSDms: Double?
    var coverage: Double
    var formulas: ContractValue
    var sourceDevice: String?
    var sources: [String]

    enum CodingKeys: String, CodingKey {
        case id, source, trimp, coverage, formulas, sources
        case clientID = "client_id"
        case gatewayIDs = "gateway_ids"
        case deviceID = "device_id"
        case workoutType = "workout_type"
        case className = "class_name"
        case startTime = "start_time"
        case endTime = "end_time"
        case durationSeconds = "duration_seconds"
        case caloriesActive = "calories_active"
        case distanceMeters = "distance_meters"
        case avgHeartRate = "avg_heart_rate"
        case maxHeartRate = "max_heart_rate"
        case minHeartRate = "min_heart_rate"
        case secondsInZone = "seconds_in_zone"
        case effortPoints = "effort_points"
        case hrvRMSSDms = "hrv_rmssd_ms"
        case sourceDevice = "source_device"
    }

    /// Written out: the contract's nullable members (`client_id`, `class_name`,
    /// `calories_active`, `distance_meters`: GymDashSync's keys) are null when unknown,
    /// where the synthesized form would drop them.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(source, forKey: .source)
        try c.encode(gatewayIDs, forKey: .gatewayIDs)
        try c.encode(deviceID, forKey: .deviceID)
        try c.encode(workoutType, forKey: .workoutType)
        try c.encode(className, forKey: .className)
        try c.encode(startTime, forKey: .startTime)
        try c.encode(endTime, forKey: .endTime)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(caloriesActive, forKey: .caloriesActive)
        try c.encode(distanceMeters, forKey: .distanceMeters)
        try c.encode(avgHeartRate, forKey: .avgHeartRate)
        try c.encode(maxHeartRate, forKey: .maxHeartRate)
        try c.encode(minHeartRate, forKey: .minHeartRate)
        try c.encode(secondsInZone, forKey: .secondsInZone)
        try c.encode(effortPoints, forKey: .effortPoints)
        try c.encode(trimp, forKey: .trimp)
        try c.encodeIfPresent(hrvRMSSDms, forKey: .hrvRMSSDms)
        try c.encode(coverage, forKey: .coverage)
        try c.encode(formulas, forKey: .formulas)
        try c.encode(sourceDevice, forKey: .sourceDevice)
        try c.encode(sources, forKey: .sources)
    }

    /// The stored text: sorted keys, so the same workout is always the same text.
    var text: String { String(decoding: ContractValue.encoded(self), as: UTF8.self) }
}
