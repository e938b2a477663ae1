// SPDX-License-Identifier: MIT
import PostgresNIO

extension ServerStore {
    /// Every member: the `members` rows and the client ids known only from pairing codes
    /// and merged workouts (named by their id), each with the straps whose latest pairing
    /// or assignment is theirs; by name. One query whatever the number of members.
    public func members(clientID: String? = nil) async throws -> [Member] {
        let rows = try await reads.query("""
            WITH known AS (
                SELECT client_id FROM members
                UNION SELECT client_id FROM pairing_codes WHERE client_id IS NOT NULL
                UNION SELECT client_id FROM merged_workouts
            ), events AS (
                SELECT upper(device_address) AS d, client_id, used_at AS at, 0 AS kind FROM pairing_codes
                WHERE used_at IS NOT NULL AND device_address IS NOT NULL
                UNION ALL
                SELECT device_address, client_id, assigned_at, 1 FROM strap_assignments
            ), latest AS (
                SELECT DISTINCT ON (d) d, client_id FROM events ORDER BY d, at DESC, kind DESC
            ), straps AS (
                SELECT client_id, string_agg(d, ' ' ORDER BY d) AS list FROM latest WHERE client_id IS NOT NULL GROUP BY client_id
            )
            SELECT k.client_id, coalesce(m.name, k.client_id), m.age, m.max_hr, m.resting_hr, round(m.weight_kg::numeric, 1)::float8, m.sex,
                   coalesce(s.list, '')
            FROM known k LEFT JOIN members m USING (client_id) LEFT JOIN straps s USING (client_id)
            WHERE \(clientID)::text IS NULL OR k.client_id = \(clientID)::text
            ORDER BY lower(coalesce(m.name, k.client_id)), k.client_id
            """, logger: logger)
        var out: [Member] = []
        for try await (id, name, age, maxHR, resting, weight, sex, straps) in rows.decode(
            (String, String, Int?, Int?, Int?, Double?, String?, String).self) {
            out.append(Member(clientID: id, name: name, age: age, maxHR: maxHR, restingHR: resting, weightKg: weight, sex: sex,
                              straps: straps.split(separator: " ").map(String.init)))
        }
        return out
    }

    /// One member, nil when the id is not known at all.
    public func member(_ clientID: String) async throws -> Member? {
        try await members(clientID: clientID).first
    }

    /// A new member; the id is `m-` and 10 random base-32 characters unless given. A given
    /// id that is a member's already (a row, or known from codes or workouts) is refused,
    /// naming it: adding would silently rename someone; `updateMember` does that on purpose.
    public func addMember(name: String, clientID: String? = nil, changes: MemberChanges = MemberChanges()) async throws -> Member {
        let name = try MemberChanges.checkedName(name)
        var blank = Member(clientID: "", name: name, straps: [])
        var changes = changes
        changes.name = name
        blank = try changes.applied(to: blank)
        if let given = clientID {
            let id = try MemberChanges.checkedClientID(given)
            guard !(try await isMember(id)), try await insert(blank, id: id) else {
                throw AdminError(description: "member \(id) already exists; change it with `member set \(id)`")
            }
            return try await primary.member(id) ?? blank
        }
        for _ in 0..<10 {
            let id = Self.newClientID()
            if try await insert(blank, id: id) { return try await primary.member(id) ?? blank }
        }
        throw AdminError(description: "could not find a free member id")
    }

    /// `m-` and 10 characters of RFC 4648's base-32 alphabet in lower case: 50 bits, easy
    /// to read out and type into a gateway's configuration.
    static func newClientID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var g = SystemRandomNumberGenerator()
        return "m-" + String((0..<10).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &g)] })
    }

    private func insert(_ m: Member, id: String) async throws -> Bool {
        let rows = try await database.query("""
            INSERT INTO members (client_id, name, age, max_hr, resting_hr, weight_kg, sex)
            VALUES (\(id), \(m.name), \(m.age), \(m.maxHR), \(m.restingHR), \(m.weightKg)::float8, \(m.sex))
            ON CONFLICT (client_id) DO NOTHING RETURNING 1
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Applies `changes` to a known member (giving an id known only from codes or workouts
    /// its row); nil when the id is unknown. The row is locked while the changes are
    /// checked against it, so two edits of the maximum and the resting rate at once cannot
    /// leave the resting rate above the maximum.
    public func updateMember(_ clientID: String, _ changes: MemberChanges) async throws -> Member? {
        guard let current = try await primary.member(clientID) else { return nil }
        _ = try changes.applied(to: current)
        // PostgresNIO wraps what a transaction's body throws, so a problem found under the
        // lock is returned and thrown after the commit (which then wrote nothing but the
        // row an id known only from codes gets anyway).
        let problem = try await database.withTransaction(logger: logger) { c -> MemberProblem? in
            try await c.query("""
                INSERT INTO members (client_id, name) VALUES (\(clientID), \(current.name)) ON CONFLICT (client_id) DO NOTHING
                """, logger: logger)
            var locked = current
            for try await (name, age, maxHR, resting, weight, sex) in try await c.query("""
                SELECT name, age, max_hr, resting_hr, round(weight_kg::numeric, 1)::float8, sex FROM members WHERE client_id = \(clientID) FOR UPDATE
                """, logger: logger).decode((String, Int?, Int?, Int?, Double?, String?).self) {
                locked = Member(clientID: clientID, name: name, age: age, maxHR: maxHR, restingHR: resting, weightKg: weight,
                                sex: sex, straps: current.straps)
            }
            let m: Member
            do throws(MemberProblem) { m = try changes.applied(to: locked) } catch { return error }
            try await c.query("""
                UPDATE members SET name = \(m.name), age = \(m.age), max_hr = \(m.maxHR), resting_hr = \(m.restingHR),
                    weight_kg = \(m.weightKg)::float8, sex = \(m.sex), updated_at = now()
                WHERE client_id = \(clientID)
                """, logger: logger)
            return nil
        }
        if let problem { throw problem }
        return try await primary.member(clientID)
    }

    /// Whether an id is a member's: a row, a pairing code made for it, or a merged workout.
    func isMember(_ clientID: String) async throws -> Bool {
        let rows = try await database.query("""
            SELECT EXISTS (SELECT 1 FROM members WHERE client_id = \(clientID))
                OR EXISTS (SELECT 1 FROM pairing_codes WHERE client_id = \(clientID))
                OR EXISTS (SELECT 1 FROM merged_workouts WHERE client_id = \(clientID))
            """, logger: logger)
        for try await known in rows.decode(Bool.self) { return known }
        return false
    }

    public enum AssignOutcome: Sendable, Equatable {
        case assigned
        case unknownMember
    }

    /// Records that `address` (already upper case) is worn by `clientID` from now on, or by
    /// nobody (nil). Items sent without a client id for the strap are attributed by it
    /// (`blegate_member_at`) until a later pairing or assignment.
    func assign(address: String, clientID: String?, name: String?, model: String?, gateway: String?) async throws -> AssignOutcome {
        if let clientID, !(try await isMember(clientID)) { return .unknownMember }
        try await database.query("""
            INSERT INTO strap_assignments (device_address, client_id, gateway_id, device_name, device_model)
            VALUES (\(address), \(clientID), \(gateway), \(name), \(model))
            """, logger: logger)
        return .assigned
    }
}
