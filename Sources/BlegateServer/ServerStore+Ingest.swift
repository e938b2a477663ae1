// SPDX-License-Identifier: MIT
import Outbox
import PostgresNIO
import BackendContract

/// The batch answer of every ingest endpoint: `inserted + duplicates + rejected.count` is
/// the number of items sent.
public struct BatchOutcome: Sendable, Equatable {
    public var inserted = 0
    public var duplicates = 0
    public var rejected: [(id: String, reason: String)] = []

    public static func == (a: BatchOutcome, b: BatchOutcome) -> Bool {
        a.inserted == b.inserted && a.duplicates == b.duplicates && a.rejected.map(\.id) == b.rejected.map(\.id)
            && a.rejected.map(\.reason) == b.rejected.map(\.reason)
    }

    var answer: BatchAnswer {
        BatchAnswer(inserted: inserted, duplicates: duplicates, rejected: rejected.map { BatchAnswer.Rejected(id: $0.id, reason: $0.reason) })
    }
}

extension ServerStore {
    /// Whether JSON text holds the escape `\u0000`, which jsonb refuses. A plain scan of the
    /// bytes: `firstRange(of:)` on the UTF-8 view took 46 % of the server's CPU at 4,000
    /// records/s (`perf`, scripts/bench-server.sh). After a backslash the next byte is part
    /// of its escape, so an escaped backslash followed by `u0000` is not one.
    static func hasEscapedNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { b in
            let backslash = UInt8(ascii: "\\"), zero = UInt8(ascii: "0")
            var i = 0
            while i + 5 < b.count {
                if b[i] != backslash { i += 1; continue }
                if b[i + 1] == UInt8(ascii: "u"), b[i + 2] == zero, b[i + 3] == zero, b[i + 4] == zero, b[i + 5] == zero {
                    return true
                }
                i += 2
            }
            return false
        }
    }

    /// Stores a batch of WearMetrics records in one transaction (`blegate_store_records`).
    ///
    /// A record is a duplicate when its strap's minute holds its id (a replay), or when another
    /// gateway already stored a record of the same device and source in the same second (one
    /// strap heard by two gateways). The first gateway to claim a second keeps it; its own further
    /// records in that second are kept, as they are distinct notifications. A record sent
    /// without a client id is stored under the member its strap was paired to at its time,
    /// through whichever gateway (`blegate_member_at`); the record's JSON stays as sent.
    ///
    /// `body` is the request's JSON text, `records` its `records` array decoded: PostgreSQL
    /// takes each stored record's JSON out of the text itself (`jsonb_array_elements`), as
    /// encoding 200 records again with `JSONEncoder` would cost the server more than all
    /// the rest of the request.
    func accept(records: [ContractValue], body: String, gateway: String) async throws -> BatchOutcome {
        let outcome = try await store(records: records, body: body, gateway: gateway)
        metrics?.batch(workouts: false, outcome)
        return outcome
    }

    /// A batch's records as the columns `store` sends PostgreSQL: the ones the contract
    /// refuses and the repeats of an id within the batch left out (counted in the outcome).
    package struct RecordColumns {
        package var ids: [String] = [], clients: [String] = [], devices: [String] = [], sources: [String] = []
        package var times: [String] = [], hrs: [Double] = [], positions: [Int] = []
        package var kept: [ContractValue] = []
    }

    /// The work `store` does on each record before the database: the contract's checks,
    /// the id lowercased and looked up among the batch's, the columns.
    package static func columns(of records: [ContractValue]) -> (outcome: BatchOutcome, columns: RecordColumns) {
        var outcome = BatchOutcome()
        var seen: Set<String> = []
        seen.reserveCapacity(records.count)
        var c = RecordColumns()
        for (position, r) in records.enumerated() {
            if let problem = ContractValidation.recordProblem(r) {
                outcome.rejected.append((r["id"]?.string ?? "", problem))
                continue
            }
            // A valid id is ASCII: lowercased only when it has an upper-case letter (rare).
            let sent = r["id"]!.string!
            let id = sent.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } ? sent.lowercased() : sent
            guard seen.insert(id).inserted else {
                outcome.duplicates += 1
                continue
            }
            c.ids.append(id)
            c.clients.append(r["client_id"]?.string ?? "")
            c.devices.append(r["device_id"]!.string!)
            c.sources.append(r["source"]!.string!)
            c.times.append(r["timestamp"]!.string!)
            // As float4 holds it: PostgreSQL refuses a float8 too small for float4 (1e-50)
            // where Swift rounds it to 0.
            c.hrs.append(r["metrics"]?["hr"]?.number.map { Double(Float($0)) } ?? -1)
            c.positions.append(position + 1)   // WITH ORDINALITY counts from 1
            c.kept.append(r)
        }
        return (outcome, c)
    }

    private func store(records: [ContractValue], body: String, gateway: String) async throws -> BatchOutcome {
        var (outcome, c) = Self.columns(of: records)
        guard !c.ids.isEmpty else { return outcome }
        // jsonb refuses `\u0000` anywhere in the text, in a rejected record too: then the
        // records kept are written out again, alone (rare; a gateway never sends one).
        var body = body
        if Self.hasEscapedNUL(body) {
            body = "{\"records\":[" + c.kept.map(\.text).joined(separator: ",") + "]}"
            c.positions = Array(1...c.kept.count)
        }
        // The months' partitions first, in their own short transaction: making one locks the
        // whole table for a moment, which should not last as long as the batch.
        try await database.query("""
            SELECT blegate_month_partition('record_minutes', m)
            FROM (SELECT DISTINCT date_trunc('month', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
                  FROM unnest(\(c.times)::timestamptz[]) AS u(t)) AS months
            """, logger: logger)
        // One statement (`blegate_store_records`, migration 7), atomic on its own.
        let rows = try await database.query("""
            SELECT blegate_store_records(\(gateway), \(c.ids)::uuid[], \(c.clients)::text[], \(c.devices)::text[],
                                         \(c.sources)::text[], \(c.times)::timestamptz[], \(c.hrs)::float8[],
                                         \(c.positions)::int8[], \(body)::jsonb)
            """, logger: logger)
        var inserted = 0
        for try await k in rows.decode(Int.self) { inserted += k }
        outcome.inserted = inserted
        outcome.duplicates += c.ids.count - inserted
        return outcome
    }

    /// Samples are idempotent by `uuid` alone: they are already one per record and type.
    func accept(samples: [ContractValue], gateway: String) async throws -> (inserted: Int, duplicates: Int) {
        var seen: Set<String> = []
        var duplicates = 0
        var uuids: [String] = [], types: [String] = [], values: [Double] = [], starts: [String] = [], ends: [String] = []
        var clients: [String] = [], bodies: [String] = []
        for s in samples {
            let uuid = s["uuid"]!.string!.lowercased()
            guard seen.insert(uuid).inserted else { duplicates += 1; continue }
            uuids.append(uuid)
            types.append(s["dataType"]!.string!)
            values.append(s["value"]!.number!)
            starts.append(s["startDate"]!.string!)
            ends.append(s["endDate"]!.string!)
            clients.append(s["clientId"]?.string ?? "")
            bodies.append(s.text)
        }
        guard !uuids.isEmpty else { return (0, duplicates) }
        let rows = try await database.query("""
            INSERT INTO samples (uuid, gateway_id, data_type, value, start_date, end_date, client_id, body)
            SELECT u.id, \(gateway), u.t, u.v, u.s, u.e, nullif(u.c, ''), u.b
            FROM unnest(\(uuids)::uuid[], \(types)::text[], \(values)::float8[], \(starts)::timestamptz[],
                        \(ends)::timestamptz[], \(clients)::text[], \(bodies)::jsonb[]) AS u(id, t, v, s, e, c, b)
            ON CONFLICT (uuid) DO NOTHING
            RETURNING 1
            """, logger: logger)
        var inserted = 0
        for try await _ in rows { inserted += 1 }
        return (inserted, duplicates + uuids.count - inserted)
    }

    func accept(profileMetrics metrics: [ContractValue], gateway: String) async throws -> BatchOutcome {
        var outcome = BatchOutcome()
        var seen: Set<String> = []
        var ids: [String] = [], clients: [String] = [], names: [String] = [], values: [Double] = [], units: [String] = []
        var times: [String] = [], devices: [String] = [], bodies: [String] = []
        for m in metrics {
            if let problem = ContractValidation.profileMetricProblem(m) {
                outcome.rejected.append((m["id"]?.string ?? "", problem))
                continue
            }
            let id = m["id"]!.string!.lowercased()
            guard seen.insert(id).inserted else { outcome.duplicates += 1; continue }
            ids.append(id)
            clients.append(m["client_id"]?.string ?? "")
            names.append(m["metric"]!.string!)
            values.append(m["value"]!.number!)
            units.append(m["unit"]!.string!)
            times.append(m["measured_at"]!.string!)
            devices.append(m["device_id"]?.string ?? "")
            bodies.append(m.text)
        }
        guard !ids.isEmpty else { return outcome }
        let rows = try await database.query("""
            INSERT INTO profile_metrics (id, gateway_id, client_id, metric, value, unit, measured_at, device_id, body)
            SELECT u.id, \(gateway), nullif(u.c, ''), u.m, u.v, u.un, u.t, nullif(u.d, ''), u.b
            FROM unnest(\(ids)::uuid[], \(clients)::text[], \(names)::text[], \(values)::float8[], \(units)::text[],
                        \(times)::timestamptz[], \(devices)::text[], \(bodies)::jsonb[]) AS u(id, c, m, v, un, t, d, b)
            ON CONFLICT (id) DO NOTHING
            RETURNING 1
            """, logger: logger)
        var inserted = 0
        for try await _ in rows { inserted += 1 }
        outcome.inserted = inserted
        outcome.duplicates += ids.count - inserted
        return outcome
    }
}
