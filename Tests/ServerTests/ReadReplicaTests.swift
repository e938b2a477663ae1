// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// `--read-database-url`: a streaming standby made with `pg_basebackup -R` serves people's
/// reads (the staff page, member reads, the CSV) while every write goes to the primary.
/// With the standby's replay paused, a server reading it shows the data as it was, one
/// reading the primary shows it all, and writes still succeed: they never reach the
/// read-only standby. After resuming, the standby catches up.
@Suite("blegate-server: a read replica")
struct ReadReplicaTests {
    /// A cluster of its own from scripts/test-postgres.sh (a standby of `standbyOf`'s
    /// socket directory when given); its admin URL.
    static func cluster(standbyOf: String? = nil) async throws -> (BackgroundProcess, DatabaseURL) {
        let env = standbyOf.map { "BLEGATE_PG_STANDBY_OF='\($0)' " } ?? ""
        let process = try await BackgroundProcess.start("\(env)'\(PostgresFixture.repository)/scripts/test-postgres.sh' \(getpid())")
        guard await process.waitForStdout("READY ", timeout: 120) else {
            throw TestSupportError("scripts/test-postgres.sh did not start: \(process.stderr)")
        }
        let line = process.stdout.split(separator: "\n").first { $0.hasPrefix("READY ") }!
        return (process, try DatabaseURL(String(line.dropFirst("READY ".count))))
    }

    static func single(_ url: DatabaseURL, _ sql: String) async throws -> String? {
        try await PostgresFixture.withClient(url) { c in
            for try await v in try await c.query(PostgresQuery(unsafeSQL: sql)).decode(String?.self) { return v }
            return nil
        }
    }

    @Test("reads land on the standby (replay paused: old data there, all of it on the primary), writes never do; a page after its own write reads the primary",
          .timeLimit(.minutes(4)))
    func replica() async throws {
        let (primaryProcess, primaryAdmin) = try await Self.cluster()
        defer { primaryProcess.signal(SIGTERM) }
        try await PostgresFixture.withClient(primaryAdmin) { c in _ = try await c.query("CREATE DATABASE fleet") }
        var primary = primaryAdmin
        primary.database = "fleet"
        let gateway = try await ServerProcess.prepare(primary, gateways: ["room-a"])[0]

        let socket = try #require(primaryAdmin.socketDirectory, "the test cluster listens on a unix socket")
        let (standbyProcess, standbyAdmin) = try await Self.cluster(standbyOf: socket)
        defer { standbyProcess.signal(SIGTERM) }
        var standby = standbyAdmin
        standby.database = "fleet"
        #expect(try await Self.single(standby, "SELECT pg_is_in_recovery()::text") == "true")

        var logger = Logger(label: "replica-test")
        logger.logLevel = .error
        let replicaServer = BlegateServer(.init(port: 0, database: primary, timeZone: .utc, readDatabase: standby), logger: logger)
        let primaryServer = BlegateServer(.init(port: 0, database: primary, timeZone: .utc), logger: logger)
        let viaReplica = ServerHarness(server: replicaServer, port: try await replicaServer.start(), database: primary,
                                       staffToken: try await replicaServer.store.addStaff("replica-test"))
        let viaPrimary = ServerHarness(server: primaryServer, port: try await primaryServer.start(), database: primary,
                                       staffToken: try await primaryServer.store.addStaff("primary-test"))
        defer { Task { await viaReplica.stop(); await viaPrimary.stop() } }

        func points(_ h: ServerHarness) async throws -> Int {
            let a = try await h.get("/api/v1/members/c-1/heart-rate?limit=1000")
            return try #require(a.json?["heart_rate"]?.array, "\(a.status) \(a.body)").count
        }
        func csvRows(_ h: ServerHarness) async throws -> Int {
            let a = try await h.get("/api/v1/members/c-1/workouts.csv")
            #expect(a.status == 200)
            return a.body.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count - 1
        }
        func memberNames(_ h: ServerHarness) async throws -> [String] {
            let a = try await h.get("/api/v1/members", token: gateway)
            return (a.json?["members"]?.array ?? []).compactMap { $0["name"]?.string }
        }
        func send(_ minute: Int, count: Int) async throws {
            let records = (0..<count).map { Make.record(time: String(format: "2026-11-25T10:%02d:%02d.000Z", minute, $0), hr: 100 + $0) }
            let a = try await viaReplica.send("/api/v1/metrics", Make.metrics(gateway: "room-a", records), token: gateway)
            #expect(a.status == 200 && a.json?["inserted"]?.number == Double(count), "\(a.status) \(a.body)")
        }

        try await send(0, count: 20)
        try await eventually("the standby replays the first records", seconds: 30) { try await points(viaReplica) == 20 }

        // Replay paused: the standby holds what it has.
        _ = try await Self.single(standby, "SELECT pg_wal_replay_pause()::text")
        try await eventually("replay paused", seconds: 30) {
            try await Self.single(standby, "SELECT pg_get_wal_replay_pause_state()") == "paused"
        }
        try await send(1, count: 15)
        let workout = Make.workout(gateway: "room-a", start: "2026-11-25T10:00:00.000Z", end: "2026-11-25T10:30:00.000Z", duration: 1800)
        let sent = try await viaReplica.send("/api/v1/workouts", Make.workouts(gateway: "room-a", [workout]), token: gateway)
        #expect(sent.status == 200 && sent.json?["inserted"]?.number == 1, "writes go to the primary: \(sent.body)")
        let added = try await StaffPageTests.request(viaReplica, "/staff/members", form: "name=Bea&client_id=c-2")
        #expect(added.status == 303, "\(added.body)")

        #expect(try await points(viaPrimary) == 35)
        #expect(try await points(viaReplica) == 20, "heart rate read from the standby")
        #expect(try await csvRows(viaPrimary) == 1)
        #expect(try await csvRows(viaReplica) == 0, "the CSV read from the standby")
        #expect(try await memberNames(viaPrimary).contains("Bea"))
        #expect(!(try await memberNames(viaReplica).contains("Bea")), "member reads from the standby")
        let staffPage = try await StaffPageTests.request(viaReplica, "/staff")
        #expect(staffPage.status == 200 && !staffPage.body.contains("Bea"), "the staff page reads the standby")
        // The page shown right after the add reads the primary, so the new member is on it.
        let afterAdd = try await StaffPageTests.request(viaReplica, try #require(added.location))
        #expect(afterAdd.status == 200 && afterAdd.body.contains("Member added.") && afterAdd.body.contains("Bea"), "\(afterAdd.body.prefix(400))")

        // Replay resumed: the standby catches up.
        _ = try await Self.single(standby, "SELECT pg_wal_replay_resume()::text")
        try await eventually("the standby catches up", seconds: 30) {
            let p = try await points(viaReplica), c = try await csvRows(viaReplica), m = try await memberNames(viaReplica)
            return p == 35 && c == 1 && m.contains("Bea")
        }
        #expect(try await Self.single(standby, "SELECT pg_is_in_recovery()::text") == "true", "still a standby: it took no write")
    }
}
