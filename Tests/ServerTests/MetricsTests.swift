// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Testing

/// blegate-server's `/metrics` (docs/metrics.md, job `blegate-server`) scraped over HTTP from
/// a running server: counters equal what the answers said, the staff page shows the same
/// figures, the database probe sees an outage by itself, and `prometheus-targets` writes
/// the fleet's file_sd file.
@Suite("blegate-server metrics")
struct MetricsTests {
    /// A server with `/metrics` on a port of its own, over a fresh database.
    static func start() async throws -> (server: BlegateServer, port: Int, metricsPort: Int, database: DatabaseURL) {
        let database = try await PostgresFixture.database()
        var logger = Logger(label: "blegate-server-metrics-test")
        logger.logLevel = .error
        let server = BlegateServer(.init(host: "127.0.0.1", port: 0, database: database, timeZone: .utc,
                                         metrics: .init(host: "127.0.0.1", port: 0)), logger: logger)
        let port = try await server.start()
        let metricsPort = try #require(server.metricsPort, "start() tells the metrics port")
        return (server, port, metricsPort, database)
    }

    /// One scrape: each sample line as `name{labels}` → value, and the whole text.
    static func scrape(_ port: Int) async throws -> (samples: [String: Double], text: String) {
        let answer = try await ServerHarness.fetch(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), limit: 4 << 20)
        #expect(answer.status == 200)
        #expect(answer.headers.first(name: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        var samples: [String: Double] = [:]
        for line in answer.body.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return (samples, answer.body)
    }

    @Test("after a batch (a duplicate, a rejected record), workouts and an unknown path: counters as answered, routes, buckets, database, gateways")
    func scrapeAfterTraffic() async throws {
        let (server, port, metricsPort, _) = try await Self.start()
        defer { Task { await server.stop() } }
        let token = try await server.store.addGateway("gw-m")
        let base = "http://127.0.0.1:\(port)"

        let repeated = Make.record(time: "2026-11-25T10:00:01.000Z")
        let records = [Make.record(time: "2026-11-25T10:00:00.000Z"), repeated, repeated, Make.record(time: "2026-11-25T10:00:02.000Z"),
                       #"{"id":"not-a-uuid","client_id":null,"timestamp":"x","device_id":"d","source":"s","metrics":{},"meta":{}}"#]
        let batch = try await ServerHarness.send(to: base + "/api/v1/metrics", Make.metrics(gateway: "gw-m", records), token: token,
                                                 outboxDepth: 42)
        #expect(batch.status == 200, "\(batch.body)")
        let (stored, duplicates) = (batch.json?["inserted"]?.intValue ?? -1, batch.json?["duplicates"]?.intValue ?? -1)
        let rejected = batch.json?["rejected"]?.array?.count ?? -1
        #expect(stored == 3 && duplicates == 1 && rejected == 1, "\(batch.body)")

        let workout = Make.workout(gateway: "gw-m", start: "2026-11-25T07:00:00.000Z", end: "2026-11-25T07:45:00.000Z", duration: 2700)
        let badWorkout = #"{"id":"\#(UUID().uuidString)","workout_type":"swim"}"#
        let workouts = try await ServerHarness.send(to: base + "/api/v1/workouts", Make.workouts(gateway: "gw-m", [workout, badWorkout]),
                                                    token: token, outboxDepth: 42)
        #expect(workouts.json?["inserted"]?.intValue == 1 && workouts.json?["rejected"]?.array?.count == 1, "\(workouts.body)")
        let unknown = try await ServerHarness.send(to: base + "/no/such/path/\(UUID().uuidString)", "", token: nil, method: .GET, gzip: false)
        #expect(unknown.status == 404)

        // The probe runs at start and every 5 s: wait for its first answer.
        var scraped = try await Self.scrape(metricsPort)
        try await eventually("blegate_server_database_up 1", seconds: 20) {
            scraped = try await Self.scrape(metricsPort)
            return scraped.samples["blegate_server_database_up"] == 1
        }
        let s = scraped.samples
        #expect(s["blegate_server_build_info{version=\"\(BlegateServer.version)\"}"] == 1)
        #expect(s["blegate_server_records_total{outcome=\"stored\"}"] == Double(stored))
        #expect(s["blegate_server_records_total{outcome=\"duplicate\"}"] == Double(duplicates))
        #expect(s["blegate_server_records_total{outcome=\"rejected\"}"] == Double(rejected))
        #expect(s["blegate_server_workouts_total{outcome=\"stored\"}"] == 1)
        #expect(s["blegate_server_workouts_total{outcome=\"duplicate\"}"] == 0)
        #expect(s["blegate_server_workouts_total{outcome=\"rejected\"}"] == 1)
        #expect(s["blegate_server_http_requests_total{route=\"/api/v1/metrics\",method=\"POST\",status=\"200\"}"] == 1, "\(scraped.text)")
        #expect(s["blegate_server_http_requests_total{route=\"/api/v1/workouts\",method=\"POST\",status=\"200\"}"] == 1)
        #expect(s["blegate_server_http_requests_total{route=\"other\",method=\"GET\",status=\"404\"}"] == 1)
        #expect(!scraped.text.contains("/no/such/path"), "an unknown path is `other`, never a label of its own")
        #expect(s["blegate_server_http_request_duration_seconds_bucket{route=\"/api/v1/metrics\",le=\"0.25\"}"] != nil, "\(scraped.text)")
        #expect(s["blegate_server_http_request_duration_seconds_count{route=\"/api/v1/metrics\"}"] == 1)
        #expect(s["blegate_server_http_request_duration_seconds_bucket{route=\"/api/v1/metrics\",le=\"+Inf\"}"] == 1)
        #expect((s["blegate_server_database_probe_duration_seconds"] ?? -1) >= 0)
        #expect(s["blegate_server_database_connections_in_use"] == 0, "every connection is back after the answers")
        #expect((s["blegate_server_database_connection_wait_seconds_count"] ?? 0) > 0, "\(scraped.text)")
        #expect(s["blegate_server_gateway_outbox_pending_records{gateway=\"gw-m\"}"] == 42)
        let contact = try #require(s["blegate_server_gateway_last_contact_timestamp_seconds{gateway=\"gw-m\"}"], "\(scraped.text)")
        #expect(abs(contact - Date().timeIntervalSince1970) < 120, "last contact \(contact) is about now")

        // The staff page's Server panel shows the same figures, from the same tallies.
        var request = HTTPClientRequest(url: base + "/staff")
        request.headers.add(name: "Cookie", value: "blegate_staff=\(try await server.store.addStaff("metrics"))")
        let page = try await ServerHarness.fetch(request, limit: 4 << 20).body
        #expect(page.contains("<section id=\"server\">") && page.contains("data-field=\"database\">up<"), "\(page.prefix(2000))")
        for (field, value) in [("records-stored", stored), ("records-duplicate", duplicates), ("records-rejected", rejected),
                               ("workouts-stored", 1), ("workouts-rejected", 1)] {
            #expect(page.contains("data-field=\"\(field)\">\(value)<"), "\(field) \(value)")
        }
        // The page counts the requests answered before it: the two batches and the 404.
        #expect(page.contains("data-field=\"requests\">3<"))
        #expect(page.contains("data-gateway=\"gw-m\"") && page.contains("<td>42</td>"), "the gateway's outbox depth")

        // Counters only advance: a second scrape after another batch adds to them.
        _ = try await ServerHarness.send(to: base + "/api/v1/metrics", Make.metrics(gateway: "gw-m", [repeated]), token: token)
        let again = try await Self.scrape(metricsPort).samples
        #expect(again["blegate_server_records_total{outcome=\"duplicate\"}"] == Double(duplicates + 1))
        #expect(again["blegate_server_http_requests_total{route=\"/api/v1/metrics\",method=\"POST\",status=\"200\"}"] == 2)
    }

    @Test("a metrics port already taken: start() fails, and the server holding it keeps serving")
    func metricsPortTaken() async throws {
        let (server, _, metricsPort, database) = try await Self.start()
        defer { Task { await server.stop() } }
        var logger = Logger(label: "blegate-server-metrics-test")
        logger.logLevel = .critical
        let second = BlegateServer(.init(host: "127.0.0.1", port: 0, database: database, timeZone: .utc,
                                         metrics: .init(host: "127.0.0.1", port: metricsPort)), logger: logger)
        await #expect(throws: (any Error).self) { try await second.start() }
        #expect(second.metricsPort == nil)
        #expect(try await Self.scrape(metricsPort).samples["blegate_server_build_info{version=\"\(BlegateServer.version)\"}"] == 1,
                "the first server still serves its metrics")
    }

    @Test("the database stops answering: database_up goes to 0 from the probe alone, and back to 1 when it answers again",
          .timeLimit(.minutes(2)))
    func databaseDown() async throws {
        let (server, _, metricsPort, database) = try await Self.start()
        defer { Task { await server.stop() } }
        try await eventually("the first probe answers", seconds: 20) {
            try await Self.scrape(metricsPort).samples["blegate_server_database_up"] == 1
        }
        // This database alone refuses new connections and its open ones end (as when
        // PostgreSQL restarts); no request is sent meanwhile.
        let admin = try await PostgresFixture.cluster.admin()
        func connections(allowed: Bool) async throws {
            try await PostgresFixture.withClient(admin) { c in
                _ = try await c.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(database.database) ALLOW_CONNECTIONS \(allowed)"))
                if !allowed {
                    _ = try await c.query("""
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = \(database.database) AND pid <> pg_backend_pid()
                        """)
                }
            }
        }
        try await connections(allowed: false)
        let cut = ContinuousClock.now
        try await eventually("blegate_server_database_up 0", seconds: 20, every: .milliseconds(200)) {
            try await Self.scrape(metricsPort).samples["blegate_server_database_up"] == 0
        }
        // A probe every 5 s with 2 s to answer: seen within one period and a deadline.
        #expect(ContinuousClock.now - cut < .seconds(15), "seen after \(ContinuousClock.now - cut)")

        try await connections(allowed: true)
        try await eventually("blegate_server_database_up 1 again", seconds: 60, every: .milliseconds(200)) {
            try await Self.scrape(metricsPort).samples["blegate_server_database_up"] == 1
        }
    }

    @Test("prometheus-targets: a group per gateway not revoked, at its set address or its id, written whole; set-address checks its input")
    func prometheusTargets() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        _ = try await ServerProcess.prepare(database, gateways: ["room-1", "room-2", "room-3", "room-4"])
        func run(_ arguments: String) async -> (out: String, status: Int32) {
            await shell("'\(ServerProcess.binary)' \(arguments) --database-url '\(database)' 2>&1")
        }
        let set = await run("gateway set-address room-2 10.0.0.12")
        #expect(set.status == 0 && set.out.contains("room-2 is scraped at 10.0.0.12"), "\(set.out)")
        #expect(await run("gateway set-address room-4 fe80::1").status == 0)
        #expect(await run("gateway set-address room-9 10.0.0.9").status != 0, "an unknown gateway is refused")
        let bad = await run("gateway set-address room-1 'pi 1;rm'")
        #expect(bad.status != 0 && bad.out.contains("not a host name or an IP address"), "\(bad.out)")
        #expect(await run("gateway revoke room-3").status == 0)

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-targets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/blegate.json"
        try "stale".write(toFile: file, atomically: false, encoding: .utf8)
        let wrote = await run("prometheus-targets --output '\(file)' --port 9464")
        #expect(wrote.status == 0 && wrote.out.contains("wrote 3 targets to \(file)"), "\(wrote.out)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["blegate.json"], "no temporary file left beside it")

        let parsed = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [[String: Any]]
        let groups = try #require(parsed, "a JSON array of target groups")
        var byGateway: [String: [String]] = [:]
        for g in groups {
            let labels = try #require(g["labels"] as? [String: String])
            byGateway[try #require(labels["gateway"])] = g["targets"] as? [String]
        }
        #expect(byGateway == ["room-1": ["room-1:9464"], "room-2": ["10.0.0.12:9464"], "room-4": ["[fe80::1]:9464"]])

        // `none` gives the gateway its id back; another port.
        #expect(await run("gateway set-address room-2 none").status == 0)
        #expect(await run("prometheus-targets --output '\(file)' --port 9500").status == 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("\"room-2:9500\"") && !text.contains("10.0.0.12") && !text.contains("room-3"), "\(text)")
    }

    @Test("serve --metrics-listen: the process serves /metrics on its own port")
    func serveFlag() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        let (process, _) = try await ServerProcess.start(database, port: 0, metrics: "127.0.0.1:0")
        defer { process.signal(SIGKILL) }
        var metricsPort: Int?
        try await eventually("the metrics listener's log line", seconds: 20) {
            let text = process.stdout + process.stderr
            guard let range = text.range(of: "metrics on http://127.0.0.1:") else { return false }
            metricsPort = Int(text[range.upperBound...].prefix { $0.isNumber })
            return metricsPort != nil
        }
        let scraped = try await Self.scrape(try #require(metricsPort))
        #expect(scraped.samples["blegate_server_build_info{version=\"\(BlegateServer.version)\"}"] == 1, "\(scraped.text)")
        let api = try await ServerHarness.fetch(HTTPClientRequest(url: "http://127.0.0.1:\(metricsPort!)/healthz"), limit: 1 << 16)
        #expect(api.status == 404, "the API is not served on the metrics port")
    }
}
