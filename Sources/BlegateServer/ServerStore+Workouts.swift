// SPDX-License-Identifier: MIT
import Outbox
import PostgresNIO
import BackendContract

extension ServerStore {
    /// Source workouts closer than this (gap between one's end and the next one's start)
    /// belong to one class visit.
    static let mergeGapSeconds = 300

    /// Stores workouts (POST: new ids only; PUT: `replace`, an id held is overwritten) and
    /// refreshes each member's merged workout, one transaction per workout under a
    /// per-member lock so two gateways' workouts merge into one. As the contract says, an
    /// id the server already held is a `duplicate` either way (replaced or not), a new id
    /// `inserted`.
    func accept(workouts: [ContractValue], gateway: String, replace: Bool) async throws -> BatchOutcome {
        let outcome = try await store(workouts: workouts, gateway: gateway, replace: replace)
        metrics?.batch(workouts: true, outcome)
        return outcome
    }

    private func store(workouts: [ContractValue], gateway: String, replace: Bool) async throws -> BatchOutcome {
        var outcome = BatchOutcome()
        var seen: Set<String> = []
        for w in workouts {
            if let problem = ContractValidation.workoutProblem(w) {
                outcome.rejected.append((w["id"]?.string ?? "", problem))
                continue
            }
            let id = w["id"]!.string!.lowercased()
            guard seen.insert(id).inserted else { outcome.duplicates += 1; continue }
            if try await store(workout: w, id: id, gateway: gateway, replace: replace) {
                outcome.inserted += 1
            } else {
                outcome.duplicates += 1
            }
        }
        return outcome
    }

    /// True when the id was new (inserted), false when the server held it (a duplicate,
    /// replaced when `replace`).
    private func store(workout w: ContractValue, id: String, gateway: String, replace: Bool) async throws -> Bool {
        let className = w["class_name"]?.string
        let start = w["start_time"]!.string!, end = w["end_time"]!.string!
        // Sent without a member (the strap was paired in another room, not this one): the
        // member its strap was paired to when the workout ended, as a gateway attributes its
        // own workouts (docs/classes.md, "Who gets a workout").
        let clientID: String?
        if let sent = w["client_id"]?.string {
            clientID = sent
        } else {
            clientID = try await member(device: w["device_id"]!.string!, at: end)
        }
        let body = w.text
        return try await database.withTransaction(logger: logger) { c -> Bool in
            if let clientID {
                try await c.query("SELECT pg_advisory_xact_lock(hashtextextended(\(clientID), 7))", logger: logger)
            }
            var previousGroup: String?
            var exists = false
            for try await g in try await c.query(
                "SELECT merged_id::text FROM workouts WHERE id = \(id)::uuid FOR UPDATE", logger: logger).decode(String?.self) {
                exists = true
                previousGroup = g
            }
            if exists && !replace { return false }
            if exists {
                try await c.query("""
                    UPDATE workouts SET gateway_id = \(gateway), client_id = \(clientID), class_name = \(className),
                        start_time = \(start)::timestamptz, end_time = \(end)::timestamptz, body = \(body)::json,
                        merged_id = NULL, updated_at = now()
                    WHERE id = \(id)::uuid
                    """, logger: logger)
            } else {
                try await c.query("""
                    INSERT INTO workouts (id, gateway_id, client_id, class_name, start_time, end_time, body)
                    VALUES (\(id)::uuid, \(gateway), \(clientID), \(className), \(start)::timestamptz, \(end)::timestamptz, \(body)::json)
                    """, logger: logger)
            }
            if let clientID {
                // The groups this workout touches: same member and class (open gym with open
                // gym), within the gap.
                var groups: [String] = []
                let gap = Double(Self.mergeGapSeconds)
                for try await g in try await c.query("""
                    SELECT id::text FROM merged_workouts
                    WHERE client_id = \(clientID) AND class_name IS NOT DISTINCT FROM \(className)
                      AND start_time <= \(end)::timestamptz + make_interval(secs => \(gap))
                      AND end_time >= \(start)::timestamptz - make_interval(secs => \(gap))
                    ORDER BY start_time, id
                    """, logger: logger).decode(String.self) {
                    groups.append(g)
                }
                let target = groups.first ?? id
                if groups.isEmpty {
                    try await c.query("""
                        INSERT INTO merged_workouts (id, client_id, class_name, start_time, end_time, body, sources)
                        VALUES (\(target)::uuid, \(clientID), \(className), \(start)::timestamptz, \(end)::timestamptz, \(body)::json, 1)
                        ON CONFLICT (id) DO NOTHING
                        """, logger: logger)
                }
                for other in groups.dropFirst() {
                    try await c.query("UPDATE workouts SET merged_id = \(target)::uuid WHERE merged_id = \(other)::uuid", logger: logger)
                    try await c.query("DELETE FROM merged_workouts WHERE id = \(other)::uuid", logger: logger)
                }
                try await c.query("UPDATE workouts SET merged_id = \(target)::uuid WHERE id = \(id)::uuid", logger: logger)
                try await refresh(group: target, on: c)
                if let previousGroup, previousGroup != target, !groups.contains(previousGroup) {
                    try await refresh(group: previousGroup, on: c)
                }
            } else if let previousGroup {
                try await refresh(group: previousGroup, on: c)
            }
            return !exists
        }
    }

    /// The member `device` was paired to at `time` (`blegate_member_at`), nil when none.
    func member(device: String, at time: String) async throws -> String? {
        let rows = try await database.query("""
            SELECT blegate_member_at(\(device)::text, \(time)::timestamptz)
            """, logger: logger)
        for try await member in rows.decode(String?.self) { return member }
        return nil
    }

    /// Recomputes a merged workout from its sources, or deletes it when none is left. Each
    /// source speaks for the gateway and member it is stored under (a workout sent without a
    /// client id is stored under the member the server attributed it to).
    private func refresh(group: String, on c: PostgresConnection) async throws {
        var sources: [ContractValue] = []
        for try await (gateway, member, text) in try await c.query(
            "SELECT gateway_id, client_id, body::text FROM workouts WHERE merged_id = \(group)::uuid", logger: logger)
            .decode((String, String?, String).self) {
            guard case var .object(m)? = try? ContractValue.parse(text, guess: .workout) else { continue }
            m["gateway_id"] = .string(gateway)
            m["client_id"] = member.map(ContractValue.string) ?? .null
            sources.append(.object(m))
        }
        guard let merged = WorkoutMerge.merge(id: group, sources: sources) else {
            try await c.query("DELETE FROM merged_workouts WHERE id = \(group)::uuid", logger: logger)
            return
        }
        try await c.query("""
            UPDATE merged_workouts SET start_time = \(merged.startTime)::timestamptz, end_time = \(merged.endTime)::timestamptz,
                class_name = \(merged.className), body = \(merged.text)::json,
                sources = \(sources.count), updated_at = now()
            WHERE id = \(group)::uuid
            """, logger: logger)
    }
}
