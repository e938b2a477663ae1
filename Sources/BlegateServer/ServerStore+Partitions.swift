// SPDX-License-Identifier: MIT
import PostgresNIO

/// The monthly partitions of `record_minutes` (migration 6): which exist, and retention,
/// which drops a whole month at once instead of deleting its rows one by one.
extension ServerStore {
    public enum PartitionedTable: String, Sendable, CaseIterable {
        /// Records with their second claims, a row per strap and minute.
        case records = "record_minutes"
    }

    public struct Partition: Sendable, Equatable {
        public var table: PartitionedTable
        public var name: String
        /// The month it holds, `YYYY-MM` (UTC).
        public var month: String
    }

    /// Every month partition, oldest first.
    public func partitions() async throws -> [Partition] {
        var out: [Partition] = []
        for table in PartitionedTable.allCases {
            let rows = try await database.query("""
                SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = to_regclass(\(table.rawValue)) ORDER BY 1
                """, logger: logger)
            for try await name in rows.decode(String.self) {
                guard let month = Self.month(of: name, in: table) else { continue }
                out.append(Partition(table: table, name: name, month: month))
            }
        }
        return out
    }

    /// Drops the partitions of `table` for months before `month` (`YYYY-MM`, UTC); returns
    /// those dropped.
    public func dropPartitions(of table: PartitionedTable, before month: String) async throws -> [Partition] {
        guard Self.isMonth(month) else { throw AdminError(description: "month must be YYYY-MM, got \(month)") }
        var dropped: [Partition] = []
        for p in try await partitions() where p.table == table && p.month < month {
            // The name came from the catalog and matched `<table>_YYYY_MM`: safe to splice.
            try await database.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \"\(p.name)\""), logger: logger)
            dropped.append(p)
        }
        return dropped
    }

    /// Retention: records of the last `recordMonths` whole months and the current one are
    /// kept, with their seconds' claims, which live in the same rows. `now` is the current
    /// time (ISO 8601; the database's clock when nil).
    public func applyRetention(recordMonths: Int, now: String? = nil) async throws -> [Partition] {
        guard recordMonths >= 0 else { throw AdminError(description: "months to keep must not be negative") }
        func cutoff(_ months: Int) async throws -> String {
            var month = ""
            for try await m in try await database.query("""
                SELECT to_char(date_trunc('month', coalesce(\(now)::timestamptz, now()) AT TIME ZONE 'UTC')
                               - make_interval(months => \(months)::int), 'YYYY-MM')
                """, logger: logger).decode(String.self) { month = m }
            return month
        }
        return try await dropPartitions(of: .records, before: try await cutoff(recordMonths))
    }

    /// `record_minutes_2026_11` → `2026-11`; nil for a table that is not one of our month partitions.
    static func month(of name: String, in table: PartitionedTable) -> String? {
        let prefix = table.rawValue + "_"
        guard name.hasPrefix(prefix) else { return nil }
        let rest = Array(name.dropFirst(prefix.count).utf8)
        guard rest.count == 7, rest[4] == UInt8(ascii: "_"),
              rest.enumerated().allSatisfy({ $0.offset == 4 || ($0.element >= 0x30 && $0.element <= 0x39) }) else { return nil }
        var month = rest
        month[4] = UInt8(ascii: "-")
        return String(decoding: month, as: UTF8.self)
    }

    static func isMonth(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 7, u[4] == UInt8(ascii: "-"),
              u.enumerated().allSatisfy({ $0.offset == 4 || ($0.element >= 0x30 && $0.element <= 0x39) }) else { return false }
        let m = Int(u[5] - 0x30) * 10 + Int(u[6] - 0x30)
        return (1...12).contains(m)
    }
}
