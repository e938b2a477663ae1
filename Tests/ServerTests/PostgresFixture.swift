// SPDX-License-Identifier: MIT
import BackendContract
import AsyncHTTPClient
import BlegateServer
import BlegateTestSupport
import CompressNIO
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import Synchronization
import TimeZoneFiles

/// One PostgreSQL for the whole test process: `BLEGATE_TEST_DATABASE_URL` (a role that may
/// create databases) when set, else a throw-away cluster from scripts/test-postgres.sh,
/// which removes itself when this process exits. Each test gets its own database.
enum PostgresFixture {
    static let cluster = ClusterBox()

    final class ClusterBox: Sendable {
        private let url = Mutex<Task<DatabaseURL, any Error>?>(nil)

        func admin() async throws -> DatabaseURL {
            let task = url.withLock { t -> Task<DatabaseURL, any Error> in
                if let t { return t }
                let made = Task { try await PostgresFixture.startCluster() }
                t = made
                return made
            }
            return try await task.value
        }
    }

    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    static func startCluster() async throws -> DatabaseURL {
        if let given = ProcessInfo.processInfo.environment["BLEGATE_TEST_DATABASE_URL"] { return try DatabaseURL(given) }
        let process = try await BackgroundProcess.start("'\(repository)/scripts/test-postgres.sh' \(getpid())")
        guard await process.waitForStdout("READY ", timeout: 120) else {
            throw TestSupportError("scripts/test-postgres.sh did not start PostgreSQL: \(process.stderr)")
        }
        let line = process.stdout.split(separator: "\n").first { $0.hasPrefix("READY ") }!
        return try DatabaseURL(String(line.dropFirst("READY ".count)))
    }

    /// A new, empty database on the shared cluster.
    static func database() async throws -> DatabaseURL {
        var admin = try await cluster.admin()
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await withClient(admin) { c in
            _ = try await c.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE template0"))
        }
        admin.database = name
        return admin
    }

    /// Runs `body` with a connected client, then shuts it down.
    static func withClient<T: Sendable>(_ url: DatabaseURL, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        var logger = Logger(label: "test-postgres")
        logger.logLevel = .error
        let client = PostgresClient(configuration: url.clientConfiguration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await client.run(); return nil }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}

/// A blegate-server on loopback over its own fresh database, and the requests a gateway
/// or a staff member makes to it.
struct ServerHarness: Sendable {
    let server: BlegateServer
    let port: Int
    let database: DatabaseURL
    let staffToken: String

    var store: ServerStore { server.store }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `timeZone`: the staff page's zone (UTC unless a test is about local times);
    /// `database`: one a test prepared (else a fresh one).
    static func start(timeZone: TimeZoneFile = .utc, database prepared: DatabaseURL? = nil) async throws -> ServerHarness {
        let database = if let prepared { prepared } else { try await PostgresFixture.database() }
        var logger = Logger(label: "blegate-server-test")
        logger.logLevel = .error
        let server = BlegateServer(.init(host: "127.0.0.1", port: 0, database: database, timeZone: timeZone), logger: logger)
        let port = try await server.start()
        let staff = try await server.store.addStaff("tests")
        return ServerHarness(server: server, port: port, database: database, staffToken: staff)
    }

    func stop() async { await server.stop() }

    struct Answer: Sendable {
        var status: Int
        var body: String
        var headers: [(String, String)]
        var json: ContractValue? { try? ContractValue.parse(body) }
    }

    /// A gateway's request: the body gzip-compressed, a bearer token, the two headers.
    func send(_ path: String, _ body: String, token: String?, method: HTTPMethod = .POST, gzip: Bool = true,
              outboxDepth: Int? = nil, version: String? = nil) async throws -> Answer {
        try await Self.send(to: baseURL + path, body, token: token, method: method, gzip: gzip, outboxDepth: outboxDepth, version: version)
    }

    /// A gateway's request to any backend (this server, the loopback test backend).
    static func send(to url: String, _ body: String, token: String?, method: HTTPMethod = .POST, gzip: Bool = true,
                     outboxDepth: Int? = nil, version: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let outboxDepth { request.headers.add(name: "Blegate-Outbox-Depth", value: String(outboxDepth)) }
        if let version { request.headers.add(name: "Blegate-Version", value: version) }
        var buffer = ByteBuffer(string: body)
        if gzip {
            buffer = try buffer.compress(with: .gzip())
            request.headers.add(name: "Content-Encoding", value: "gzip")
        }
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(buffer)
        return try await execute(request)
    }

    /// A staff read: GET with the staff token (or `token`).
    func get(_ path: String, token: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token ?? staffToken)")
        return try await Self.execute(request)
    }

    /// One keep-alive client for the process, never shut down; redirects are answers, as
    /// the gateway's client has them.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(configuration: configuration)
    }()

    /// Sends `request` and reads its whole answer (at most `limit` bytes) within `timeout`.
    static func fetch(_ request: HTTPClientRequest, limit: Int, timeout: Int64 = 30) async throws
        -> (status: Int, headers: HTTPHeaders, body: String) {
        let response = try await http.execute(request, timeout: .seconds(timeout))
        let body = try await response.body.collect(upTo: limit)
        return (Int(response.status.code), response.headers, String(buffer: body))
    }

    private static func execute(_ request: HTTPClientRequest) async throws -> Answer {
        let answer = try await fetch(request, limit: 64 << 20)
        return Answer(status: answer.status, body: answer.body, headers: answer.headers.map { ($0.name, $0.value) })
    }
}

/// Builders for the contract's JSON.
enum Make {
    static func record(id: String = UUID().uuidString.lowercased(), client: String? = "c-1", device: String = "A0:9E:1A:00:00:01",
                       time: String, hr: Int = 120, source: String = "ble_hrm") -> String {
        let c = client.map { "\"\($0)\"" } ?? "null"
        return """
        {"id":"\(id)","client_id":\(c),"timestamp":"\(time)","device_id":"\(device)","source":"\(source)","metrics":{"hr":\(hr)},"meta":{"battery":"0.9"},"rr_ms":[500]}
        """
    }

    static func metrics(gateway: String, _ records: [String]) -> String {
        "{\"gateway_id\":\"\(gateway)\",\"records\":[\(records.joined(separator: ","))]}"
    }

    static func workout(id: String = UUID().uuidString.lowercased(), client: String? = "c-1", gateway: String, className: String? = "HIIT 7am",
                        start: String, end: String, duration: Int, avgHR: Double = 140, maxHR: Int = 175, minHR: Int = 95,
                        kcal: Double? = 300, zones: [Int]? = nil, points: Double = 30, coverage: Double = 1,
                        device: String = "A0:9E:1A:00:00:01") -> String {
        let c = client.map { "\"\($0)\"" } ?? "null"
        let k = className.map { "\"\($0)\"" } ?? "null"
        let z = zones ?? [0, duration / 5, duration / 5, duration / 5, duration / 5, duration - 4 * (duration / 5)]
        return """
        {"id":"\(id)","client_id":\(c),"source":"blegate","gateway_id":"\(gateway)","device_id":"\(device)","workout_type":"hiit",\
        "class_name":\(k),"start_time":"\(start)","end_time":"\(end)","duration_seconds":\(duration),"calories_active":\(kcal.map { "\($0)" } ?? "null"),\
        "avg_heart_rate":\(avgHR),"max_heart_rate":\(maxHR),"min_heart_rate":\(minHR),"seconds_in_zone":\(z),"effort_points":\(points),\
        "trimp":50.0,"coverage":\(coverage),"formulas":{"zones":"z1","kcal":"k1","points":"p1"},"source_device":"Polar H10"}
        """
    }

    static func workouts(gateway: String, _ items: [String]) -> String {
        "{\"gateway_id\":\"\(gateway)\",\"workouts\":[\(items.joined(separator: ","))]}"
    }

    static func profileMetric(id: String = UUID().uuidString.lowercased(), metric: String = "weight", value: Double = 71.5,
                              unit: String = "kg") -> String {
        """
        {"id":"\(id)","client_id":"c-1","metric":"\(metric)","value":\(value),"unit":"\(unit)","measured_at":"2026-11-25T10:00:00.000Z","source":"blegate","device_id":"scale-1"}
        """
    }

    static func sample(uuid: String = UUID().uuidString.lowercased(), value: Double = 120) -> String {
        """
        {"dataType":"heartRate","value":\(value),"unit":"count/min","startDate":"2026-11-25T10:00:00.000Z","endDate":"2026-11-25T10:00:00.000Z","uuid":"\(uuid)","sourceName":"blegate","deviceName":"Polar H10","deviceId":"A0:9E","clientId":"c-1"}
        """
    }
}

extension ContractValue {
    var intValue: Int? { number.map { Int($0) } }
}
