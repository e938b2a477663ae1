// SPDX-License-Identifier: MIT
import JSON
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
        var body: JSONValue

        init?(_ w: JSONValue) {
            guard let s = w["start_time"]?.stringValue, let e = w["end_time"]?.stringValue,
                  let start = ContractTimestamp.secondsSince1970(s), let end = ContractTimestamp.secondsSince1970(e) else { return nil }
            self.start = start
            self.end = end
            startText = s
            endText = e
            duration = w["duration_seconds"]?.doubleValue ?? (end - start)
            calories = w["calories_active"]?.doubleValue
            distance = w["distance_meters"]?.doubleValue
            avgHR = w["avg_heart_rate"]?.doubleValue ?? 0
            maxHR = w["max_heart_rate"]?.doubleValue ?? 0
            minHR = w["min_heart_rate"]?.doubleValue ?? 0
            if case let .array(z)? = w["seconds_in_zone"] { zones = z.map { $0.doubleValue ?? 0 } } else { zones = [] }
            points = w["effort_points"]?.doubleValue ?? 0
            trimp = w["trimp"]?.doubleValue ?? 0
            rmssd = w["hrv_rmssd_ms"]?.doubleValue
            coverage = w["coverage"]?.doubleValue ?? 1
            ids = [w["id"]?.stringValue ?? ""]
            gateways = [w["gateway_id"]?.stringValue ?? ""]
            body = w
        }

        var weight: Double { duration * coverage }
    }

    /// The merged workout of `sources` (at least one), keyed `id`.
    static func merge(id: String, sources: [JSONValue]) -> JSONValue? {
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

    static func json(_ p: Part, id: String) -> JSONValue {
        func r1(_ x: Double) -> JSONValue { .double((x * 10).rounded() / 10) }
        let b = p.body
        var m: [(String, JSONValue)] = [
            ("id", .string(id)),
            ("client_id", b["client_id"] ?? .null),
            ("source", .string("blegate")),
            ("gateway_ids", .array(p.gateways.map(JSONValue.string))),
            ("device_id", b["device_id"] ?? .null),
            ("workout_type", b["workout_type"] ?? .null),
            ("class_name", b["class_name"] ?? .null),
            ("start_time", .string(p.startText)),
            ("end_time", .string(p.endText)),
            ("duration_seconds", .int(Int(p.duration.rounded()))),
            ("calories_active", p.calories.map(r1) ?? .null),
        ]
        if let d = p.distance { m.append(("distance_meters", r1(d))) }
        m += [
            ("avg_heart_rate", r1(p.avgHR)),
            ("max_heart_rate", .int(Int(p.maxHR))),
            ("min_heart_rate", .int(Int(p.minHR))),
            ("seconds_in_zone", .array(p.zones.map { .int(Int($0.rounded())) })),
            ("effort_points", r1(p.points)),
            ("trimp", r1(p.trimp)),
        ]
        if let h = p.rmssd { m.append(("hrv_rmssd_ms", r1(h))) }
        m += [
            ("coverage", .double((p.coverage * 1000).rounded() / 1000)),
            ("formulas", b["formulas"] ?? .null),
            ("source_device", b["source_device"] ?? .null),
            ("sources", .array(p.ids.map(JSONValue.string))),
        ]
        return .object(m)
    }
}
