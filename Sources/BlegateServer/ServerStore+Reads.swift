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
        let rows = try await client.query("""
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

    /// A member's heart rate, oldest first, between `from` and `to` (ISO 8601, optional).
    func heartRate(clientID: String, from: String?, to: String?, limit: Int, after cursor: Cursor?) async throws -> Page<HeartRatePoint> {
        let c = cursor ?? Cursor(time: from ?? "1970-01-01T00:00:00.000Z", id: "00000000-0000-0000-0000-000000000000")
        let rows = try await client.query("""
            SELECT id::text, \(unescaped: Self.iso("ts")), hr::float8, device_id, gateway_id FROM records
            WHERE client_id = \(clientID) AND hr IS NOT NULL
              AND (ts, id) > (\(c.time)::timestamptz, \(c.id)::uuid)
              AND (\(from)::timestamptz IS NULL OR ts >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR ts < \(to)::timestamptz)
            ORDER BY ts, id LIMIT \(limit + 1)
            """, logger: logger)
        var items: [HeartRatePoint] = []
        for try await (id, t, hr, d, g) in rows.decode((String, String, Double, String, String).self) {
            items.append(HeartRatePoint(id: id, time: t, hr: hr, deviceID: d, gatewayID: g))
        }
        let more = items.count > limit
        if more { items.removeLast() }
        return Page(items: items, next: more ? items.last.map { Cursor(time: $0.time, id: $0.id) } : nil)
    }

    struct MemberSummary {
        var clientID: String
        var workouts: Int
        var lastWorkout: String?
        var devices: [String]
    }

    /// Members known from pairing codes or workouts, most recently active first.
    func members(limit: Int = 200) async throws -> [MemberSummary] {
        let rows = try await client.query("""
            WITH m AS (
                SELECT client_id FROM pairing_codes UNION SELECT client_id FROM merged_workouts
            )
            SELECT m.client_id,
                   (SELECT count(*) FROM merged_workouts w WHERE w.client_id = m.client_id)::int8,
                   (SELECT \(unescaped: Self.iso("max(w.start_time)")) FROM merged_workouts w WHERE w.client_id = m.client_id),
                   coalesce((SELECT string_agg(DISTINCT p.device_address, ' ') FROM pairing_codes p
                             WHERE p.client_id = m.client_id AND p.device_address IS NOT NULL), '')
            FROM m ORDER BY 3 DESC NULLS LAST, 1 LIMIT \(limit)
            """, logger: logger)
        var out: [MemberSummary] = []
        for try await (id, n, last, devices) in rows.decode((String, Int, String?, String).self) {
            out.append(MemberSummary(clientID: id, workouts: n, lastWorkout: last,
                                     devices: devices.split(separator: " ").map(String.init)))
        }
        return out
    }

    struct ClassSummary {
        var className: String
        var start: String
        var members: Int
        var avgHR: Double
        var gateways: [String]
    }

    /// The last classes: merged workouts grouped by class name and start hour.
    func lastClasses(limit: Int = 20) async throws -> [ClassSummary] {
        let rows = try await client.query("""
            SELECT class_name, \(unescaped: Self.iso("hour")), count(DISTINCT client_id)::int8,
                   coalesce(avg(hr) FILTER (WHERE gi = 1), 0), string_agg(DISTINCT g, ' ')
            FROM (SELECT m.class_name, date_trunc('hour', m.start_time) AS hour, m.client_id,
                         (m.body->>'avg_heart_rate')::float8 AS hr, g.name AS g, g.gi
                  FROM merged_workouts m, json_array_elements_text(m.body->'gateway_ids') WITH ORDINALITY AS g(name, gi)
                  WHERE m.class_name IS NOT NULL) x
            GROUP BY class_name, hour
            ORDER BY hour DESC LIMIT \(limit)
            """, logger: logger)
        var out: [ClassSummary] = []
        for try await (name, start, members, avg, gateways) in rows.decode((String, String, Int, Double, String).self) {
            out.append(ClassSummary(className: name, start: start, members: members, avgHR: avg,
                                    gateways: gateways.split(separator: " ").map(String.init)))
        }
        return out
    }

    /// Counts for tests, the benchmark and the staff page.
    public func counts() async throws -> [String: Int] {
        var out: [String: Int] = [:]
        for table in ["records", "samples", "workouts", "merged_workouts", "profile_metrics", "record_seconds"] {
            for try await n in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int8 FROM \(table)"), logger: logger)
                .decode(Int.self) { out[table] = n }
        }
        return out
    }
}
