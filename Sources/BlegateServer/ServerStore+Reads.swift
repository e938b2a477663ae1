// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Outbox
import PostgresNIO
import BackendContract

/// A position in a paged list: the sort key of the last item returned, as
/// `<ISO 8601 time>_<uuid>`, opaque to callers.
struct Cursor: Equatable {
    var time: String
    var id: String

    init(time: String, id: String) {
        self.time = time
        self.id = id
    }

    init?(_ text: String) {
        let parts = text.split(separator: "_", maxSplits: 1).map(String.init)
        guard parts.count == 2, ContractTimestamp.isValid(parts[0]), ContractUUID.isValid(parts[1]) else { return nil }
        time = parts[0]
        id = parts[1]
    }

    var text: String { "\(time)_\(id)" }
}

struct Page<Item> {
    var items: [Item]
    var next: Cursor?
}

extension ServerStore {
    /// A member's merged workouts, newest first.
    /// A body that no longer reads as a merged workout is left out of the page, not failed.
    func workouts(clientID: String, limit: Int, after cursor: Cursor?) async throws -> Page<MergedWorkout> {
        let farFuture = Cursor(time: "9999-12-31T00:00:00.000Z", id: "ffffffff-ffff-ffff-ffff-ffffffffffff")
        let c = cursor ?? farFuture
        let rows = try await reads.query("""
            SELECT id::text, \(unescaped: Self.iso("start_time")), body::text FROM merged_workouts
            WHERE client_id = \(clientID) AND (start_time, id) < (\(c.time)::timestamptz, \(c.id)::uuid)
            ORDER BY start_time DESC, id DESC LIMIT \(limit + 1)
            """, logger: logger)
        var items: [(String, String, MergedWorkout?)] = []
        let decoder = JSONDecoder()
        for try await (id, start, text) in rows.decode((String, String, String).self) {
            items.append((id, start, try? decoder.decode(MergedWorkout.self, from: Data(text.utf8))))
        }
        let more = items.count > limit
        if more { items.removeLast() }
        return Page(items: items.compactMap(\.2), next: more ? items.last.map { Cursor(time: $0.1, id: $0.0) } : nil)
    }

    struct HeartRatePoint {
        var id: String
        var time: String
        var hr: Double
        var deviceID: String
        var gatewayID: String
    }

    /// A strap minute's records as rows `e` (id, micros, hr, client_id, gateway_id) of its
    /// row `m`, each at time `t.ts`.
    static let minuteRecords = """
        record_minutes m
        CROSS JOIN LATERAL unnest(m.ids, m.micros, m.hrs, m.clients, m.gateways) AS e(id, micros, hr, client_id, gateway_id)
        CROSS JOIN LATERAL (SELECT m.minute + e.micros * interval '1 microsecond' AS ts) AS t
        """

    /// A member's heart rate, oldest first, between `from` and `to` (ISO 8601, optional).
    /// The minutes holding the member (`record_minutes_members`) from the cursor's minute on.
    func heartRate(clientID: String, from: String?, to: String?, limit: Int, after cursor: Cursor?) async throws -> Page<HeartRatePoint> {
        let c = cursor ?? Cursor(time: from ?? "1970-01-01T00:00:00.000Z", id: "00000000-0000-0000-0000-000000000000")
        let rows = try await reads.query("""
            SELECT e.id::text, \(unescaped: Self.iso("t.ts")), e.hr::float8, m.device_id, e.gateway_id
            FROM \(unescaped: Self.minuteRecords)
            WHERE m.members @> ARRAY[\(clientID)::text]
              AND m.minute >= date_trunc('minute', \(c.time)::timestamptz, 'UTC')
              AND (\(to)::timestamptz IS NULL OR m.minute < \(to)::timestamptz)
              AND e.client_id = \(clientID) AND e.hr IS NOT NULL
              AND (t.ts, e.id) > (\(c.time)::timestamptz, \(c.id)::uuid)
              AND (\(from)::timestamptz IS NULL OR t.ts >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR t.ts < \(to)::timestamptz)
            ORDER BY t.ts, e.id LIMIT \(limit + 1)
            """, logger: logger)
        var items: [HeartRatePoint] = []
        for try await (id, t, hr, d, g) in rows.decode((String, String, Double, String, String).self) {
            items.append(HeartRatePoint(id: id, time: t, hr: hr, deviceID: d, gatewayID: g))
        }
        let more = items.count > limit
        if more { items.removeLast() }
        return Page(items: items, next: more ? items.last.map { Cursor(time: $0.time, id: $0.id) } : nil)
    }

    /// Each member's number of merged workouts and the start of the last (Unix seconds).
    func workoutActivity() async throws -> [String: (workouts: Int, last: Double)] {
        let rows = try await reads.query("""
            SELECT client_id, count(*)::int8, extract(epoch FROM max(start_time))::float8 FROM merged_workouts GROUP BY client_id
            """, logger: logger)
        var out: [String: (workouts: Int, last: Double)] = [:]
        for try await (id, n, last) in rows.decode((String, Int, Double).self) { out[id] = (n, last) }
        return out
    }

    /// A class as the staff page lists it: sent workouts of one class name whose start
    /// falls in one UTC hour.
    struct ClassInfo {
        var className: String
        /// The hour's start, Unix seconds: with the name, the class's key.
        var hour: Int64
        /// The earliest workout start, Unix seconds.
        var start: Double
        /// Everyone in it: members, and straps nobody was wearing by the server's records.
        var people: Int
        var avgHR: Double
        var gateways: [String]

        var key: String { "\(hour)-" + StaffPage.percentEncoded(className) }
    }

    /// The last classes, from the workouts as sent (not the merged ones), so a strap no
    /// member wore is counted too, by its address.
    func lastClasses(limit: Int = 20) async throws -> [ClassInfo] {
        let rows = try await reads.query("""
            SELECT class_name, extract(epoch FROM hour)::int8, extract(epoch FROM min(start_time))::float8,
                   count(DISTINCT coalesce(client_id, 'device:' || upper(body->>'device_id')))::int8,
                   coalesce(avg((body->>'avg_heart_rate')::float8), 0), string_agg(DISTINCT gateway_id, ' ')
            FROM (SELECT *, date_trunc('hour', start_time) AS hour FROM workouts WHERE class_name IS NOT NULL) AS w
            GROUP BY class_name, hour
            ORDER BY hour DESC, class_name LIMIT \(limit)
            """, logger: logger)
        var out: [ClassInfo] = []
        for try await (name, hour, start, people, avg, gateways) in rows.decode((String, Int64, Double, Int, Double, String).self) {
            out.append(ClassInfo(className: name, hour: hour, start: start, people: people, avgHR: avg,
                                 gateways: gateways.split(separator: " ").map(String.init)))
        }
        return out
    }

    /// One person's part in a class: their (merged, when a member's) workout and straps.
    struct ClassPerson {
        var clientID: String?
        var devices: [String]
        var workout: ContractValue
        var start: Double
        var end: Double
    }

    /// Everyone in the class `name` that started in the UTC hour `hour` (Unix seconds):
    /// a member's merged workout (the longest when sent several), else the strap's own.
    func classPeople(name: String, hour: Int64) async throws -> [ClassPerson] {
        let rows = try await reads.query("""
            SELECT w.client_id, upper(w.body->>'device_id'), coalesce(m.body, w.body)::text,
                   extract(epoch FROM coalesce(m.start_time, w.start_time))::float8,
                   extract(epoch FROM coalesce(m.end_time, w.end_time))::float8
            FROM workouts w LEFT JOIN merged_workouts m ON m.id = w.merged_id
            WHERE w.class_name = \(name) AND date_trunc('hour', w.start_time) = to_timestamp(\(Double(hour)))
            ORDER BY w.start_time, w.id
            """, logger: logger)
        var people: [String: ClassPerson] = [:]
        var order: [String] = []
        for try await (client, device, body, start, end) in rows.decode((String?, String?, String, Double, Double).self) {
            guard let workout = try? ContractValue.parse(body) else { continue }
            let key = client ?? "device:" + (device ?? "")
            guard var p = people[key] else {
                people[key] = ClassPerson(clientID: client, devices: device.map { [$0] } ?? [], workout: workout, start: start, end: end)
                order.append(key)
                continue
            }
            if let device, !p.devices.contains(device) { p.devices.append(device) }
            if (workout["duration_seconds"]?.number ?? 0) > (p.workout["duration_seconds"]?.number ?? 0) { p.workout = workout }
            p.start = min(p.start, start)
            p.end = max(p.end, end)
            people[key] = p
        }
        return order.compactMap { people[$0] }
    }

    /// Heart rates heard from `devices` (upper case) between two Unix times, oldest first.
    func heartRates(devices: [String], from start: Double, to end: Double) async throws -> [String: [(time: Double, hr: Double)]] {
        guard !devices.isEmpty else { return [:] }
        let rows = try await reads.query("""
            SELECT upper(m.device_id), extract(epoch FROM t.ts)::float8, e.hr::float8
            FROM \(unescaped: Self.minuteRecords)
            WHERE m.minute >= date_trunc('minute', to_timestamp(\(start)), 'UTC') AND m.minute <= to_timestamp(\(end))
              AND upper(m.device_id) = ANY(\(devices)::text[])
              AND t.ts >= to_timestamp(\(start)) AND t.ts <= to_timestamp(\(end)) AND e.hr IS NOT NULL
            ORDER BY t.ts
            """, logger: logger)
        var out: [String: [(time: Double, hr: Double)]] = [:]
        for try await (device, time, hr) in rows.decode((String, Double, Double).self) { out[device, default: []].append((time, hr)) }
        return out
    }

    /// A member's merged workouts for their page, newest first: start (Unix seconds), the
    /// hour key of its class, and the workout.
    func memberWorkouts(clientID: String, limit: Int = 200) async throws -> [(start: Double, hour: Int64, workout: ContractValue)] {
        let rows = try await reads.query("""
            SELECT extract(epoch FROM start_time)::float8, extract(epoch FROM date_trunc('hour', start_time))::int8, body::text
            FROM merged_workouts WHERE client_id = \(clientID) ORDER BY start_time DESC, id DESC LIMIT \(limit)
            """, logger: logger)
        var out: [(start: Double, hour: Int64, workout: ContractValue)] = []
        for try await (start, hour, body) in rows.decode((Double, Int64, String).self) {
            if let w = try? ContractValue.parse(body) { out.append((start, hour, w)) }
        }
        return out
    }

    /// Counts for tests, the benchmark and the staff page.
    public func counts() async throws -> [String: Int] {
        var out: [String: Int] = [:]
        for table in ["samples", "workouts", "merged_workouts", "profile_metrics", "record_minutes"] {
            for try await n in try await database.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int8 FROM \(table)"), logger: logger)
                .decode(Int.self) { out[table] = n }
        }
        // Records are the minutes' elements.
        for try await n in try await database.query("SELECT coalesce(sum(cardinality(ids)), 0)::int8 FROM record_minutes", logger: logger)
            .decode(Int.self) { out["records"] = n }
        return out
    }
}
