// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import Foundation
import Logging
import Testing

/// Every gateway endpoint against a real PostgreSQL: answers in the contract's shape,
/// replays counted as duplicates and stored once, bad items rejected one by one.
@Suite("blegate-server ingest")
struct IngestTests {
    @Test("metrics: inserted, replayed as duplicates, invalid records rejected with the field, gzip or identity")
    func metrics() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        let ids = (0..<5).map { _ in UUID().uuidString.lowercased() }
        let records = ids.enumerated().map { Make.record(id: $1, time: "2026-11-25T10:00:0\($0).000Z") }
        let bad = #"{"id":"not-a-uuid","client_id":null,"timestamp":"x","device_id":"d","source":"s","metrics":{},"meta":{}}"#
        let noDevice = #"{"id":"3f0c2c1e-4f0a-4d2b-9a51-3e8f6c1d2a90","client_id":null,"timestamp":"2026-11-25T10:00:00.000Z","device_id":"","source":"s","metrics":{},"meta":{}}"#

        // The bad ones among the good, so each stored body must be taken from its own place in the batch.
        let sent = Array(records[0..<2]) + [bad] + Array(records[2...]) + [noDevice]
        let first = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", sent), token: token)
        #expect(first.status == 200)
        #expect(first.json?["inserted"]?.intValue == 5)
        #expect(first.json?["duplicates"]?.intValue == 0)
        let rejected = first.json?["rejected"]?.array ?? []
        #expect(rejected.map { $0["id"]?.string } == ["not-a-uuid", "3f0c2c1e-4f0a-4d2b-9a51-3e8f6c1d2a90"])
        #expect(rejected.last?["reason"]?.string == "device_id: must be a non-empty string")
        let bodies = try await PostgresFixture.withClient(h.database) { c in
            var all: [String: String] = [:]
            for try await (id, body) in try await c.query("SELECT id::text, body::text FROM records").decode((String, String).self) { all[id] = body }
            return all
        }
        #expect(bodies.count == 5)
        for (id, record) in zip(ids, records) {
            #expect(try bodies[id].map { try ContractValue.parse($0) } == (try ContractValue.parse(record)), "the record's JSON is stored as sent")
        }

        // A replay (the gateway crashed before recording the answer), without gzip this time.
        let replay = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", records), token: token, gzip: false)
        #expect(replay.json?["inserted"]?.intValue == 0)
        #expect(replay.json?["duplicates"]?.intValue == 5)
        #expect(try await h.store.counts()["records"] == 5)

        let empty = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", []), token: token)
        #expect(empty.status == 200 && empty.body == #"{"duplicates":0,"inserted":0,"rejected":[]}"#)

        let notJSON = try await h.send("/api/v1/metrics", "{records: nope", token: token)
        #expect(notJSON.status == 400 && notJSON.json?["error"]?.string?.hasPrefix("body is not gzip-compressed JSON") == true)
        let noGateway = try await h.send("/api/v1/metrics", #"{"records":[]}"#, token: token)
        #expect(noGateway.status == 400 && noGateway.json?["error"]?.string == "gateway_id: required non-empty string")
        let get = try await h.get("/api/v1/metrics", token: token)
        #expect(get.status == 405)
        let unknown = try await h.send("/api/v1/nothing", "{}", token: token)
        #expect(unknown.status == 404 && unknown.json?["error"] != nil)
    }

    @Test("samples, profile metrics and workouts (POST, then PUT replacing one and inserting a new id): idempotent by id")
    func otherEndpoints() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")

        let samples = (0..<3).map { _ in Make.sample() }
        let s1 = try await h.send("/api/v1/samples", "{\"samples\":[\(samples.joined(separator: ","))]}", token: token)
        #expect(s1.status == 200 && s1.body == #"{"duplicates":0,"inserted":3}"#)
        let s2 = try await h.send("/api/v1/samples", "{\"samples\":[\(samples.joined(separator: ","))]}", token: token)
        #expect(s2.body == #"{"duplicates":3,"inserted":0}"#)
        let badSample = try await h.send("/api/v1/samples", #"{"samples":[{"uuid":"x"}]}"#, token: token)
        #expect(badSample.status == 400 && badSample.json?["error"]?.string == "samples[0].uuid: must be a UUID string (8-4-4-4-12 hex)")

        let metrics = [Make.profileMetric(), Make.profileMetric(metric: "height", value: 180, unit: "cm")]
        let wrongUnit = Make.profileMetric(metric: "height", value: 180, unit: "kg")
        let m1 = try await h.send("/api/v1/profile-metrics", "{\"gateway_id\":\"gw-a\",\"metrics\":[\((metrics + [wrongUnit]).joined(separator: ","))]}", token: token)
        #expect(m1.json?["inserted"]?.intValue == 2)
        #expect(m1.json?["rejected"]?.array?.first?["reason"]?.string == "unit: must be cm for height")
        let m2 = try await h.send("/api/v1/profile-metrics", "{\"gateway_id\":\"gw-a\",\"metrics\":[\(metrics.joined(separator: ","))]}", token: token)
        #expect(m2.json?["duplicates"]?.intValue == 2 && m2.json?["inserted"]?.intValue == 0)

        let id = UUID().uuidString.lowercased()
        let w = Make.workout(id: id, gateway: "gw-a", start: "2026-11-25T07:00:00.000Z", end: "2026-11-25T07:45:00.000Z", duration: 2700, maxHR: 170)
        let w1 = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [w]), token: token)
        #expect(w1.body == #"{"duplicates":0,"inserted":1,"rejected":[]}"#)
        let w2 = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [w]), token: token)
        #expect(w2.body == #"{"duplicates":1,"inserted":0,"rejected":[]}"#)
        // A correction after late records: the same id with a new maximum, and one never seen.
        let corrected = Make.workout(id: id, gateway: "gw-a", start: "2026-11-25T07:00:00.000Z", end: "2026-11-25T07:46:00.000Z", duration: 2760, maxHR: 181)
        let other = Make.workout(gateway: "gw-a", className: "Spin 9am", start: "2026-11-25T09:00:00.000Z", end: "2026-11-25T09:30:00.000Z", duration: 1800)
        let w3 = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [corrected, other]), token: token, method: .PUT)
        // The contract: a replaced id is a duplicate (the server held it), the new one inserted.
        #expect(w3.body == #"{"duplicates":1,"inserted":1,"rejected":[]}"#)
        let listed = try await h.get("/api/v1/members/c-1/workouts")
        let workouts = listed.json?["workouts"]?.array ?? []
        #expect(workouts.count == 2)
        let hiit = workouts.first { $0["class_name"]?.string == "HIIT 7am" }
        #expect(hiit?["max_heart_rate"]?.intValue == 181)
        #expect(hiit?["end_time"]?.string == "2026-11-25T07:46:00.000Z")
        let badWorkout = #"{"id":"\#(UUID().uuidString)","workout_type":"swim"}"#
        let w4 = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [badWorkout]), token: token)
        #expect(w4.json?["rejected"]?.array?.first?["reason"]?.string == "source: must be \"blegate\"")
        #expect(try await h.store.counts()["workouts"] == 2)
    }

    @Test("two instances migrating one new database at once apply each step once")
    func concurrentMigrations() async throws {
        let url = try await PostgresFixture.database()
        let versions = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try await PostgresFixture.withClient(url) { c in
                        var quiet = Logger(label: "migrate-test")
                        quiet.logLevel = .error
                        return try await ServerStore(client: c, logger: quiet).migrate()
                    }
                }
            }
            var all: [Int] = []
            for try await v in group { all += v }
            return all
        }
        // Each step once, whichever instance applied it.
        #expect(versions.sorted() == [1, 2, 3, 4, 5, 6, 7])
        let recorded = try await PostgresFixture.withClient(url) { c in
            var n = 0
            for try await v in try await c.query("SELECT count(*)::int8 FROM schema_migrations").decode(Int.self) { n = v }
            return n
        }
        #expect(recorded == 7)
    }
}
