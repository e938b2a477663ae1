// SPDX-License-Identifier: MIT
import Logging
import PostgresNIO

/// Everything blegate-server keeps, in PostgreSQL: the server process holds no state of its
/// own, so any number of instances can share one database.
public struct ServerStore: Sendable {
    public let client: PostgresClient
    let logger: Logger
    /// Where batches are counted and connections measured; nil counts nothing.
    let metrics: ServerMetrics?
    /// Every write, and every read a write depends on, takes its connection here.
    let database: ServerDatabase
    /// Reads for people (the staff page, member reads, the CSV, the gateway list): the read
    /// replica when one is configured (`--read-database-url`), else the primary. A replica
    /// may lag the primary by its replay delay, so nothing that decides a write reads here.
    private(set) var reads: ServerDatabase

    /// - Parameter readClient: a streaming standby's pool for `reads`; nil reads the primary.
    public init(client: PostgresClient, readClient: PostgresClient? = nil, logger: Logger, metrics: ServerMetrics? = nil) {
        self.client = client
        self.logger = logger
        self.metrics = metrics
        self.database = ServerDatabase(client: client, metrics: metrics)
        self.reads = readClient.map { ServerDatabase(client: $0, metrics: metrics) } ?? database
    }

    /// This store reading the primary: for a page shown right after its own write (a new
    /// member, a saved profile, a new pairing code), which a lagging replica may not hold yet.
    var primary: ServerStore {
        var s = self
        s.reads = database
        return s
    }

    /// `to_char` pattern for the contract's timestamps (UTC, milliseconds).
    static func iso(_ column: String) -> String {
        "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    }

    public func migrate() async throws -> [Int] {
        try await Migrations.run(on: client, logger: logger)
    }

    /// The steps up to `version` only: a database as an older server left it (tests of the
    /// steps that follow).
    public func migrate(through version: Int) async throws -> [Int] {
        try await Migrations.run(on: client, through: version, logger: logger)
    }

    // MARK: Gateways and their tokens

    public enum Caller: Sendable, Equatable {
        case gateway(String)
        case revoked(String)
        case unknown
    }

    public func caller(token: String) async throws -> Caller {
        let rows = try await database.query(
            "SELECT id, revoked_at IS NOT NULL FROM gateways WHERE token_sha256 = \(Secrets.sha256(token))", logger: logger)
        for try await (id, revoked) in rows.decode((String, Bool).self) {
            return revoked ? .revoked(id) : .gateway(id)
        }
        return .unknown
    }

    /// Notes a gateway's contact and what it said about itself.
    ///
    /// A contact is telemetry, not data a gateway was told is stored: its commit does not wait
    /// for the WAL flush (`synchronous_commit` off for its own transaction), so a batch waits
    /// for one flush, its own, not two. This disk's flushes stall for 250 ms or more several
    /// times a minute (scripts/bench-server.sh's probe); a crash loses at most the last
    /// contacts, which the next request writes again.
    func touch(gateway: String, outboxDepth: Int?, version: String?) async throws {
        try await database.query("""
            UPDATE gateways SET last_contact = now(), requests = requests + 1,
                outbox_depth = coalesce(\(outboxDepth), outbox_depth), version = coalesce(\(version), version)
            FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed
            WHERE id = \(gateway)
            """, logger: logger)
    }

    public struct AdminError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Creates a gateway, or gives a revoked one a new token; returns the token, which is
    /// shown once and never stored.
    public func addGateway(_ id: String) async throws -> String {
        guard !id.isEmpty, id.count <= 200 else { throw AdminError(description: "gateway id must be 1 to 200 characters") }
        let token = Secrets.token()
        let hash = Secrets.sha256(token)
        let rows = try await database.query("""
            INSERT INTO gateways (id, token_sha256) VALUES (\(id), \(hash))
            ON CONFLICT (id) DO UPDATE SET token_sha256 = excluded.token_sha256, revoked_at = NULL
                WHERE gateways.revoked_at IS NOT NULL
            RETURNING id
            """, logger: logger)
        var made = false
        for try await _ in rows { made = true }
        guard made else {
            throw AdminError(description: "gateway \(id) already exists with a live token; revoke it first to issue a new one")
        }
        return token
    }

    /// Revokes a gateway's token; false when there is no such gateway.
    public func revokeGateway(_ id: String) async throws -> Bool {
        let rows = try await database.query(
            "UPDATE gateways SET revoked_at = coalesce(revoked_at, now()) WHERE id = \(id) RETURNING id", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    public struct GatewayInfo: Sendable, Equatable {
        public var id: String
        public var revoked: Bool
        public var lastContact: String?
        /// `lastContact` as Unix time.
        public var lastContactUnixSeconds: Double?
        public var secondsSinceContact: Double?
        public var outboxDepth: Int?
        public var version: String?
        public var requests: Int
        /// The host name or IP address Prometheus reaches the gateway at (`gateway set-address`).
        public var address: String?
    }

    public func gateways() async throws -> [GatewayInfo] {
        let rows = try await reads.query("""
            SELECT id, revoked_at IS NOT NULL, \(unescaped: Self.iso("last_contact")), extract(epoch FROM last_contact)::float8,
                   extract(epoch FROM now() - last_contact)::float8, outbox_depth, version, requests, address
            FROM gateways ORDER BY id
            """, logger: logger)
        var out: [GatewayInfo] = []
        for try await (id, revoked, last, unix, age, depth, version, requests, address)
            in rows.decode((String, Bool, String?, Double?, Double?, Int?, String?, Int, String?).self) {
            out.append(GatewayInfo(id: id, revoked: revoked, lastContact: last, lastContactUnixSeconds: unix, secondsSinceContact: age,
                                   outboxDepth: depth, version: version, requests: requests, address: address))
        }
        return out
    }

    /// Sets the host name or IP address a gateway is reached at (nil: none, its id is used);
    /// false when there is no such gateway.
    public func setGatewayAddress(_ id: String, address: String?) async throws -> Bool {
        if let address {
            guard Self.isHostOrAddress(address) else {
                throw AdminError(description: "\(address) is not a host name or an IP address")
            }
        }
        let rows = try await database.query("UPDATE gateways SET address = \(address) WHERE id = \(id) RETURNING id", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// A DNS name or an IPv4 or IPv6 address, as a Prometheus target's host: letters,
    /// digits, `-`, `.`, `:` (IPv6), at most 253 characters.
    static func isHostOrAddress(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 253 && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.:".contains($0)) }
            && !s.hasPrefix("-") && !s.hasPrefix(".")
    }

    // MARK: Staff

    public func addStaff(_ name: String) async throws -> String {
        guard !name.isEmpty else { throw AdminError(description: "staff name must not be empty") }
        let token = Secrets.token()
        try await database.query("""
            INSERT INTO staff_tokens (name, token_sha256) VALUES (\(name), \(Secrets.sha256(token)))
            ON CONFLICT (name) DO UPDATE SET token_sha256 = excluded.token_sha256, revoked_at = NULL
            """, logger: logger)
        return token
    }

    public func revokeStaff(_ name: String) async throws -> Bool {
        let rows = try await database.query(
            "UPDATE staff_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE name = \(name) RETURNING name", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// The staff member a token belongs to, if it is live.
    func staff(token: String) async throws -> String? {
        let rows = try await database.query(
            "SELECT name FROM staff_tokens WHERE token_sha256 = \(Secrets.sha256(token)) AND revoked_at IS NULL", logger: logger)
        for try await name in rows.decode(String.self) { return name }
        return nil
    }

    // MARK: Pairing

    /// A new single-use code for a member, valid for `validSeconds`.
    public func createPairingCode(clientID: String, validSeconds: Int) async throws -> (code: String, expiresAt: String) {
        guard !clientID.isEmpty else { throw AdminError(description: "client id must not be empty") }
        guard validSeconds > 0 else { throw AdminError(description: "expiry must be positive") }
        for _ in 0..<10 {
            let code = Secrets.pairingCode()
            let rows = try await database.query("""
                INSERT INTO pairing_codes (code, client_id, expires_at)
                VALUES (\(code), \(clientID), now() + make_interval(secs => \(Double(validSeconds))))
                ON CONFLICT (code) DO NOTHING
                RETURNING \(unescaped: Self.iso("expires_at"))
                """, logger: logger)
            for try await expires in rows.decode(String.self) { return (code, expires) }
        }
        throw AdminError(description: "could not find a free pairing code; delete old ones")
    }

    public enum PairOutcome: Sendable, Equatable {
        case paired(String)
        case unknown
        case used
        case expired
    }

    /// Exchanges a code for its client id, once: the update takes the row's lock, so two
    /// gateways racing with one code see one success and one `used`.
    func pair(code: String, address: String, name: String?, model: String?, gateway: String) async throws -> PairOutcome {
        let rows = try await database.query("""
            UPDATE pairing_codes SET used_at = now(), gateway_id = \(gateway),
                device_address = \(address), device_name = \(name), device_model = \(model)
            WHERE code = \(code) AND used_at IS NULL AND expires_at > now()
            RETURNING client_id
            """, logger: logger)
        for try await client in rows.decode(String.self) { return .paired(client) }
        let state = try await database.query(
            "SELECT used_at IS NOT NULL, expires_at <= now() FROM pairing_codes WHERE code = \(code)", logger: logger)
        for try await (used, expired) in state.decode((Bool, Bool).self) {
            return used ? .used : expired ? .expired : .unknown
        }
        return .unknown
    }

    public struct PairingCodeInfo: Sendable {
        public var code: String
        public var clientID: String
        public var expiresAt: String
        public var state: String
        public var device: String?
    }

    public func pairingCodes(limit: Int = 50) async throws -> [PairingCodeInfo] {
        let rows = try await reads.query("""
            SELECT code, client_id, \(unescaped: Self.iso("expires_at")),
                   CASE WHEN used_at IS NOT NULL THEN 'used' WHEN expires_at <= now() THEN 'expired' ELSE 'open' END,
                   device_address
            FROM pairing_codes ORDER BY created_at DESC LIMIT \(limit)
            """, logger: logger)
        var out: [PairingCodeInfo] = []
        for try await (code, client, expires, state, device) in rows.decode((String, String, String, String, String?).self) {
            out.append(PairingCodeInfo(code: code, clientID: client, expiresAt: expires, state: state, device: device))
        }
        return out
    }
}
