// SPDX-License-Identifier: MIT
import Logging
import PostgresNIO

/// The schema, as numbered steps applied in order and recorded in `schema_migrations`.
/// A step is never edited once shipped; a change is a new step. Each step runs in its own
/// transaction, and the whole run holds an advisory lock, so instances starting together
/// apply each step once.
enum Migrations {
    /// `pg_advisory_lock` key: "blegate" in ASCII.
    static let lockKey: Int64 = 0x626C_6567_6174_65

    static let steps: [(version: Int, name: String, statements: [String])] = [
        (1, "initial schema", [
            """
            CREATE TABLE gateways (
                id text PRIMARY KEY,
                token_sha256 text NOT NULL UNIQUE,
                created_at timestamptz NOT NULL DEFAULT now(),
                revoked_at timestamptz,
                last_contact timestamptz,
                outbox_depth bigint,
                version text,
                requests bigint NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE staff_tokens (
                name text PRIMARY KEY,
                token_sha256 text NOT NULL UNIQUE,
                created_at timestamptz NOT NULL DEFAULT now(),
                revoked_at timestamptz
            )
            """,
            """
            CREATE TABLE pairing_codes (
                code text PRIMARY KEY,
                client_id text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL,
                used_at timestamptz,
                gateway_id text,
                device_address text,
                device_name text,
                device_model text
            )
            """,
            "CREATE INDEX pairing_codes_client ON pairing_codes (client_id)",
            """
            CREATE TABLE records (
                id uuid PRIMARY KEY,
                gateway_id text NOT NULL,
                client_id text,
                device_id text NOT NULL,
                source text NOT NULL,
                ts timestamptz NOT NULL,
                hr real,
                body jsonb NOT NULL,
                received_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX records_client_ts ON records (client_id, ts) WHERE client_id IS NOT NULL",
            "CREATE INDEX records_ts ON records USING brin (ts)",
            // One row per strap, source and second: the gateway whose record for that second
            // arrived first (docs/server.md, "One record per strap per second").
            """
            CREATE TABLE record_seconds (
                device_id text NOT NULL,
                source text NOT NULL,
                second timestamptz NOT NULL,
                gateway_id text NOT NULL,
                PRIMARY KEY (device_id, source, second)
            )
            """,
            """
            CREATE TABLE samples (
                uuid uuid PRIMARY KEY,
                gateway_id text NOT NULL,
                data_type text NOT NULL,
                value double precision NOT NULL,
                start_date timestamptz NOT NULL,
                end_date timestamptz NOT NULL,
                client_id text,
                body jsonb NOT NULL,
                received_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE merged_workouts (
                id uuid PRIMARY KEY,
                client_id text NOT NULL,
                class_name text,
                start_time timestamptz NOT NULL,
                end_time timestamptz NOT NULL,
                body json NOT NULL,
                sources int NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX merged_workouts_client ON merged_workouts (client_id, start_time DESC, id)",
            "CREATE INDEX merged_workouts_start ON merged_workouts (start_time DESC)",
            """
            CREATE TABLE workouts (
                id uuid PRIMARY KEY,
                gateway_id text NOT NULL,
                client_id text,
                class_name text,
                start_time timestamptz NOT NULL,
                end_time timestamptz NOT NULL,
                body json NOT NULL,
                merged_id uuid REFERENCES merged_workouts (id),
                received_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX workouts_client ON workouts (client_id, start_time)",
            "CREATE INDEX workouts_merged ON workouts (merged_id)",
            """
            CREATE TABLE profile_metrics (
                id uuid PRIMARY KEY,
                gateway_id text NOT NULL,
                client_id text,
                metric text NOT NULL,
                value double precision NOT NULL,
                unit text NOT NULL,
                measured_at timestamptz NOT NULL,
                device_id text,
                body jsonb NOT NULL,
                received_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX profile_metrics_client ON profile_metrics (client_id, measured_at)",
        ]),
    ]

    /// Applies the steps not yet recorded; returns the versions it applied.
    @discardableResult
    static func run(on client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withConnection { connection in
            _ = try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger)
            do {
                let applied = try await apply(on: connection, logger: logger)
                _ = try await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                throw error
            }
        }
    }

    private static func apply(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        _ = try await connection.query("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        var done: Set<Int> = []
        for try await v in try await connection.query("SELECT version FROM schema_migrations", logger: logger).decode(Int.self) {
            done.insert(v)
        }
        var applied: [Int] = []
        for step in steps where !done.contains(step.version) {
            try await connection.withTransaction(logger: logger) { c in
                for sql in step.statements {
                    _ = try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                }
                _ = try await c.query("INSERT INTO schema_migrations (version, name) VALUES (\(step.version), \(step.name))", logger: logger)
            }
            logger.info("applied migration \(step.version): \(step.name)")
            applied.append(step.version)
        }
        return applied
    }
}
