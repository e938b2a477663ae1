// SPDX-License-Identifier: MIT
import Logging
import PostgresNIO

/// The schema, as numbered steps applied in order and recorded in `schema_migrations`.
/// A step is never edited once shipped; a change is a new step. Each step runs in its own
/// transaction under an advisory lock, so instances starting together apply each step once.
enum Migrations {
    /// `pg_advisory_xact_lock` key: "blegate" in ASCII.
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
        // Records and their second claims by month (docs/server.md, "Growing to 1,000
        // gateways"): retention drops a month's partition instead of deleting rows. A
        // partitioned table's keys must hold the partition key, so a record's key becomes
        // (id, ts); a replay carries the same timestamp as the original, so it still meets
        // the key and is a duplicate.
        (2, "records and record_seconds partitioned by month", [
            // The partition of `parent` for the UTC month of `instant`, made when missing; its name.
            // Made by whichever ingest first needs it; the lock and the caught errors let two
            // instances ask at once.
            """
            CREATE FUNCTION blegate_month_partition(parent text, instant timestamptz) RETURNS text
            LANGUAGE plpgsql AS $$
            DECLARE
                m timestamp := date_trunc('month', instant AT TIME ZONE 'UTC');
                part text := parent || '_' || to_char(m, 'YYYY_MM');
            BEGIN
                IF to_regclass(quote_ident(part)) IS NULL THEN
                    PERFORM pg_advisory_xact_lock(hashtextextended(part, 0));
                    BEGIN
                        EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                                       part, parent, m AT TIME ZONE 'UTC', (m + interval '1 month') AT TIME ZONE 'UTC');
                    EXCEPTION WHEN duplicate_table OR unique_violation THEN
                        NULL;
                    END;
                END IF;
                RETURN part;
            END
            $$
            """,
            "ALTER TABLE records RENAME TO records_unpartitioned",
            "ALTER INDEX records_pkey RENAME TO records_unpartitioned_pkey",
            "ALTER INDEX records_client_ts RENAME TO records_unpartitioned_client_ts",
            "ALTER INDEX records_ts RENAME TO records_unpartitioned_ts",
            """
            CREATE TABLE records (
                id uuid NOT NULL,
                gateway_id text NOT NULL,
                client_id text,
                device_id text NOT NULL,
                source text NOT NULL,
                ts timestamptz NOT NULL,
                hr real,
                body jsonb NOT NULL,
                received_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (id, ts)
            ) PARTITION BY RANGE (ts)
            """,
            "CREATE INDEX records_client_ts ON records (client_id, ts) WHERE client_id IS NOT NULL",
            "CREATE INDEX records_ts ON records USING brin (ts)",
            "SELECT blegate_month_partition('records', ts) FROM (SELECT DISTINCT date_trunc('month', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS ts FROM records_unpartitioned) AS months",
            "INSERT INTO records SELECT * FROM records_unpartitioned",
            "DROP TABLE records_unpartitioned",
            "ALTER TABLE record_seconds RENAME TO record_seconds_unpartitioned",
            "ALTER INDEX record_seconds_pkey RENAME TO record_seconds_unpartitioned_pkey",
            """
            CREATE TABLE record_seconds (
                device_id text NOT NULL,
                source text NOT NULL,
                second timestamptz NOT NULL,
                gateway_id text NOT NULL,
                PRIMARY KEY (device_id, source, second)
            ) PARTITION BY RANGE (second)
            """,
            """
            SELECT blegate_month_partition('record_seconds', second)
            FROM (SELECT DISTINCT date_trunc('month', second AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS second FROM record_seconds_unpartitioned) AS months
            """,
            "INSERT INTO record_seconds SELECT * FROM record_seconds_unpartitioned",
            "DROP TABLE record_seconds_unpartitioned",
        ]),
        // Who wears a strap, for records and workouts a gateway sends without a client id
        // (docs/server.md, "A member's strap in every room"): the latest pairing of the device
        // at or before a time, found by this index.
        (3, "pairings by device and time", [
            "CREATE INDEX pairing_codes_device ON pairing_codes (device_address, used_at DESC) WHERE used_at IS NOT NULL",
        ]),
        // Members with a name and a profile the gateways fetch, and straps assigned to them
        // (or unassigned, a row without a member) without a code. An assignment is an event
        // beside the code exchanges: who wears a strap at a time is the latest of either
        // (`blegate_member_at`). Client ids known only from codes and workouts stay
        // valid without a row; they read as members named by their id.
        (4, "members and strap assignments", [
            """
            CREATE TABLE members (
                client_id text PRIMARY KEY,
                name text NOT NULL,
                age int,
                max_hr int,
                resting_hr int,
                weight_kg real,
                sex text CHECK (sex IN ('female', 'male')),
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE strap_assignments (
                id bigserial PRIMARY KEY,
                device_address text NOT NULL,
                client_id text,
                assigned_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                gateway_id text,
                device_name text,
                device_model text
            )
            """,
            "CREATE INDEX strap_assignments_device ON strap_assignments (device_address, assigned_at DESC)",
        ]),
        // The host name or IP address Prometheus scrapes a gateway at (`gateway set-address`,
        // `prometheus-targets`); without one the gateway's id is its host name.
        (5, "gateway addresses", [
            "ALTER TABLE gateways ADD COLUMN address text",
        ]),
        // A strap's heart rate as one row per device, source and UTC minute (docs/server.md,
        // "Storage"): the minute's records as parallel arrays, so a stored second costs tens of
        // bytes instead of a row, a key and a claim of its own. A record's id, time, heart
        // rate, member and gateway each have an array; the rest of its JSON as sent is a
        // jsonb element without what those arrays hold. The second claims are the
        // minute's own records: a second belongs to the gateway of the records already in
        // it. The row is the unit of locking, so two gateways writing one strap's minute at
        // once take turns. `records` and `record_seconds` stay, as views, for ad hoc SQL.
        (6, "records as one row per strap and minute", [
            // What of a record's JSON the arrays do not hold: without the id (unless sent in
            // upper case), device, source, the timestamp when it reads back the same, and
            // metrics.hr when its float4 reads back the same. One expression, so PostgreSQL
            // inlines it instead of calling a function per record.
            """
            CREATE FUNCTION blegate_record_rest(body jsonb, id uuid, ts timestamptz, hr real) RETURNS jsonb
            LANGUAGE sql STABLE PARALLEL SAFE AS $$
                SELECT (body - 'device_id' - 'source'
                        - CASE WHEN body ->> 'id' = id::text THEN 'id' ELSE '' END
                        - CASE WHEN body ->> 'timestamp' = to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                               THEN 'timestamp' ELSE '' END)
                       #- CASE WHEN hr IS NOT NULL AND (body -> 'metrics' -> 'hr')::text = to_jsonb(hr)::text
                               THEN '{metrics,hr}'::text[] ELSE '{}'::text[] END
            $$
            """,
            // The record's JSON as sent, from the arrays and its rest.
            """
            CREATE FUNCTION blegate_record_body(rest jsonb, id uuid, device text, source text, ts timestamptz, hr real) RETURNS jsonb
            LANGUAGE sql STABLE PARALLEL SAFE AS $$
                SELECT CASE WHEN hr IS NOT NULL AND NOT coalesce(rest -> 'metrics' ? 'hr', true)
                            THEN jsonb_set(rest, '{metrics,hr}', to_jsonb(hr)) ELSE rest END
                       || jsonb_build_object('id', coalesce(rest -> 'id', to_jsonb(id)), 'device_id', device, 'source', source,
                                             'timestamp', coalesce(rest -> 'timestamp',
                                                 to_jsonb(to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))))
            $$
            """,
            """
            CREATE TABLE record_minutes (
                device_id text NOT NULL,
                source text NOT NULL,
                minute timestamptz NOT NULL,
                members text[] NOT NULL DEFAULT '{}',
                ids uuid[] NOT NULL DEFAULT '{}',
                micros int4[] NOT NULL DEFAULT '{}',
                hrs real[] NOT NULL DEFAULT '{}',
                clients text[] COMPRESSION lz4 NOT NULL DEFAULT '{}',
                gateways text[] COMPRESSION lz4 NOT NULL DEFAULT '{}',
                rest jsonb[] COMPRESSION lz4 NOT NULL DEFAULT '{}',
                PRIMARY KEY (device_id, source, minute)
            ) PARTITION BY RANGE (minute)
            """,
            // Without GIN's pending list: flushing it falls on whichever batch fills it, a
            // latency spike; each minute row adds its members once.
            "CREATE INDEX record_minutes_members ON record_minutes USING gin (members) WITH (fastupdate = off)",
            "CREATE INDEX record_minutes_minute ON record_minutes USING brin (minute)",
            // A minute's row is rewritten by each batch of its records (about 12 times at
            // a 5 s interval): its month is vacuumed as soon as 2% of its rows are dead, so
            // the next batches reuse the space (without, the table grows about fivefold).
            """
            CREATE OR REPLACE FUNCTION blegate_month_partition(parent text, instant timestamptz) RETURNS text
            LANGUAGE plpgsql AS $$
            DECLARE
                m timestamp := date_trunc('month', instant AT TIME ZONE 'UTC');
                part text := parent || '_' || to_char(m, 'YYYY_MM');
            BEGIN
                IF to_regclass(quote_ident(part)) IS NULL THEN
                    PERFORM pg_advisory_xact_lock(hashtextextended(part, 0));
                    BEGIN
                        EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L) %s',
                                       part, parent, m AT TIME ZONE 'UTC', (m + interval '1 month') AT TIME ZONE 'UTC',
                                       CASE WHEN parent = 'record_minutes' THEN
                                           'WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 500, '
                                           || 'toast.autovacuum_vacuum_scale_factor = 0.02, toast.autovacuum_vacuum_threshold = 500)'
                                       ELSE '' END);
                    EXCEPTION WHEN duplicate_table OR unique_violation THEN
                        NULL;
                    END;
                END IF;
                RETURN part;
            END
            $$
            """,
            """
            SELECT blegate_month_partition('record_minutes', m)
            FROM (SELECT DISTINCT date_trunc('month', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m FROM records) AS months
            """,
            """
            INSERT INTO record_minutes (device_id, source, minute, members, ids, micros, hrs, clients, gateways, rest)
            SELECT device_id, source, date_trunc('minute', ts, 'UTC'),
                   coalesce(array_agg(DISTINCT client_id) FILTER (WHERE client_id IS NOT NULL), '{}'),
                   array_agg(id ORDER BY ts, id),
                   array_agg((extract(epoch FROM ts - date_trunc('minute', ts, 'UTC')) * 1000000)::int4 ORDER BY ts, id),
                   array_agg(hr ORDER BY ts, id), array_agg(client_id ORDER BY ts, id), array_agg(gateway_id ORDER BY ts, id),
                   array_agg(blegate_record_rest(body, id, ts, hr) ORDER BY ts, id)
            FROM records GROUP BY 1, 2, 3
            """,
            "DROP TABLE records",
            "DROP TABLE record_seconds",
            """
            CREATE VIEW records AS
            SELECT e.id, e.gateway_id, e.client_id, m.device_id, m.source, t.ts, e.hr,
                   blegate_record_body(e.rest, e.id, m.device_id, m.source, t.ts, e.hr) AS body
            FROM record_minutes m
            CROSS JOIN LATERAL unnest(m.ids, m.micros, m.hrs, m.clients, m.gateways, m.rest) AS e(id, micros, hr, client_id, gateway_id, rest)
            CROSS JOIN LATERAL (SELECT m.minute + e.micros * interval '1 microsecond' AS ts) AS t
            """,
            """
            CREATE VIEW record_seconds AS
            SELECT DISTINCT device_id, source, date_trunc('second', ts) AS second, gateway_id FROM records
            """,
        ]),
        // A batch of records is stored by one function call. PostgreSQL parsed and planned
        // the batch's statements anew for each request, a fifth of its CPU per record
        // (`perf`, scripts/bench-server.sh at 8,000 records/s); a PL/pgSQL function keeps
        // each connection's plans. Who wears a strap at a time becomes a function too, for
        // it and the workouts.
        (7, "records stored by one function with cached plans", [
            // The latest pairing code exchanged for the device or assignment of it at or
            // before the time, through any gateway; NULL when none, or when it was
            // unassigned. Two index lookups (`pairing_codes_device`, `strap_assignments_device`).
            """
            CREATE FUNCTION blegate_member_at(device text, at_time timestamptz) RETURNS text
            LANGUAGE sql STABLE PARALLEL SAFE AS $$
                SELECT e.client_id FROM (
                    (SELECT p.client_id, p.used_at AS at, 0 AS kind FROM pairing_codes p
                     WHERE p.device_address = $1 AND p.used_at IS NOT NULL AND p.used_at <= $2
                     ORDER BY p.used_at DESC LIMIT 1)
                    UNION ALL
                    (SELECT a.client_id, a.assigned_at, 1 FROM strap_assignments a
                     WHERE a.device_address = upper($1) AND a.assigned_at <= $2
                     ORDER BY a.assigned_at DESC LIMIT 1)
                ) AS e ORDER BY e.at DESC, e.kind DESC LIMIT 1
            $$
            """,
            // Every strap minute of the batch gets its row, locked, in key order (two batches
            // sharing minutes wait for each other, never deadlock): `DO UPDATE ... WHERE false`
            // locks a row already there without writing it. Then a record is appended to its
            // minute when the minute holds neither its id (a replay) nor another gateway's
            // record in its second (that gateway owns the second). `positions` are the
            // records' places in `body`'s `records`, whose JSON the rest is taken from; the
            // id must match too (text with a member twice is read by PostgreSQL as its last
            // one, by the server as its first: such a record is not stored unchecked).
            // Returns how many were appended.
            """
            CREATE FUNCTION blegate_store_records(p_gateway text, p_ids uuid[], p_clients text[], p_devices text[],
                                                  p_sources text[], p_times timestamptz[], p_hrs float8[],
                                                  p_positions int8[], p_body jsonb) RETURNS int8
            LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
            DECLARE
                appended int8;
            BEGIN
                INSERT INTO record_minutes AS r (device_id, source, minute)
                SELECT DISTINCT u.d, u.s, date_trunc('minute', u.t, 'UTC')
                FROM unnest(p_devices, p_sources, p_times) AS u(d, s, t)
                ORDER BY 1, 2, 3
                ON CONFLICT (device_id, source, minute) DO UPDATE SET minute = excluded.minute WHERE false;

                WITH u AS (
                    SELECT u.id, u.d, u.s, u.t, nullif(u.h, -1)::real AS h, b.value AS body,
                           date_trunc('minute', u.t, 'UTC') AS m,
                           (extract(epoch FROM u.t - date_trunc('minute', u.t, 'UTC')) * 1000000)::int4 AS micros,
                           coalesce(nullif(u.c, ''), blegate_member_at(u.d, u.t)) AS client
                    FROM unnest(p_ids, p_clients, p_devices, p_sources, p_times, p_hrs, p_positions) AS u(id, c, d, s, t, h, n)
                    JOIN jsonb_array_elements(p_body -> 'records') WITH ORDINALITY AS b(value, n)
                        ON b.n = u.n AND lower(b.value ->> 'id') = u.id::text
                ), kept AS (
                    SELECT u.* FROM u JOIN record_minutes r ON r.device_id = u.d AND r.source = u.s AND r.minute = u.m
                    WHERE u.id <> ALL (r.ids)
                      AND NOT EXISTS (SELECT 1 FROM unnest(r.micros, r.gateways) AS o(micros, g)
                                      WHERE o.micros / 1000000 = u.micros / 1000000 AND o.g <> p_gateway)
                ), minutes AS (
                    SELECT d, s, m, array_agg(id ORDER BY t, id) AS ids, array_agg(micros ORDER BY t, id) AS micros,
                           array_agg(h ORDER BY t, id) AS hrs, array_agg(client ORDER BY t, id) AS clients,
                           array_agg(blegate_record_rest(body, id, t, h) ORDER BY t, id) AS rest
                    FROM kept GROUP BY d, s, m
                ), updated AS (
                    UPDATE record_minutes r
                    SET ids = r.ids || n.ids, micros = r.micros || n.micros, hrs = r.hrs || n.hrs,
                        clients = r.clients || n.clients,
                        gateways = r.gateways || array_fill(p_gateway, ARRAY[cardinality(n.ids)]),
                        rest = r.rest || n.rest,
                        members = ARRAY(SELECT DISTINCT x FROM unnest(r.members || n.clients) AS x WHERE x IS NOT NULL ORDER BY 1)
                    FROM minutes n
                    WHERE r.device_id = n.d AND r.source = n.s AND r.minute = n.m
                    RETURNING cardinality(n.ids)::int8 AS k
                )
                SELECT coalesce(sum(k), 0)::int8 INTO appended FROM updated;
                RETURN appended;
            END
            $$
            """,
        ]),
    ]

    /// Applies the steps not yet recorded; returns the versions it applied.
    ///
    /// Each step's transaction takes a transaction-level advisory lock and looks again
    /// whether the step is recorded: instances starting together apply it once, and the
    /// lock never outlives its transaction, so it works through PgBouncer in transaction
    /// mode (where a session lock would stay on whichever server connection took it).
    @discardableResult
    static func run(on client: PostgresClient, through last: Int = .max, logger: Logger) async throws -> [Int] {
        try await client.withConnection { connection in
            let done = try await connection.withTransaction(logger: logger) { c -> Set<Int> in
                _ = try await c.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                _ = try await c.query("""
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                    """, logger: logger)
                var done: Set<Int> = []
                for try await v in try await c.query("SELECT version FROM schema_migrations", logger: logger).decode(Int.self) {
                    done.insert(v)
                }
                return done
            }
            var applied: [Int] = []
            for step in steps where !done.contains(step.version) && step.version <= last {
                let ran = try await connection.withTransaction(logger: logger) { c -> Bool in
                    _ = try await c.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                    // Another instance may have applied it while this one waited for the lock.
                    for try await _ in try await c.query("SELECT 1 FROM schema_migrations WHERE version = \(step.version)", logger: logger) {
                        return false
                    }
                    for sql in step.statements {
                        _ = try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    }
                    _ = try await c.query("INSERT INTO schema_migrations (version, name) VALUES (\(step.version), \(step.name))", logger: logger)
                    return true
                }
                guard ran else { continue }
                logger.info("applied migration \(step.version): \(step.name)")
                applied.append(step.version)
            }
            return applied
        }
    }
}
