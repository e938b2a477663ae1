// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import Foundation
import Logging
import PostgresNIO
import Testing

/// Records are stored a row per strap, source and UTC minute (docs/server.md, "Storage"):
/// each record's JSON reads back as sent, however it spelled what the arrays hold; two
/// gateways writing one strap's minute at once still leave each second one owner; a database
/// from before moves every record and claim into the minutes.
@Suite("blegate-server: records a row per strap and minute")
struct StorageTests {
    /// Every stored record's JSON, by id, from the `records` view.
    static func bodies(_ database: DatabaseURL) async throws -> [String: ContractValue] {
        try await PostgresFixture.withClient(database) { c in
            var all: [String: ContractValue] = [:]
            for try await (id, body) in try await c.query("SELECT id::text, body::text FROM records").decode((String, String).self) {
                all[id] = try ContractValue.parse(body)
            }
            return all
        }
    }

    @Test("one row for a strap's minute; each record's JSON as sent, whatever its spelling")
    func asSent() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        let ids = (0..<6).map { _ in UUID().uuidString.lowercased() }
        let device = "A0:9E:1A:00:00:31"
        let sent = [
            Make.record(id: ids[0], device: device, time: "2026-11-25T10:00:01.000Z"),
            // Upper-case id, an offset, microseconds.
            #"{"id":"\#(ids[1].uppercased())","client_id":null,"timestamp":"2026-11-25T11:00:02.5+01:00","device_id":"\#(device)","source":"ble_hrm","metrics":{"hr":121.0,"hrv_rmssd":41.5},"meta":{"contact":true,"hr_status":1}}"#,
            #"{"id":"\#(ids[2])","client_id":"c-2","timestamp":"2026-11-25T10:00:03.123456Z","device_id":"\#(device)","source":"ble_hrm","metrics":{"hr":72.1},"meta":{}}"#,
            // No heart rate; one past float4's precision.
            #"{"id":"\#(ids[3])","client_id":"c-1","timestamp":"2026-11-25T10:00:04.000Z","device_id":"\#(device)","source":"ble_hrm","metrics":{"spo2":97},"meta":{"battery":"0.7"},"rr_ms":[496.1,502]}"#,
            #"{"id":"\#(ids[4])","client_id":"c-1","timestamp":"2026-11-25T10:00:05.000Z","device_id":"\#(device)","source":"ble_hrm","metrics":{"hr":100.00000001},"meta":{}}"#,
            Make.record(id: ids[5], device: device, time: "2026-11-25T10:00:59.999Z", hr: 0),
        ]
        let first = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", sent), token: token)
        #expect(first.status == 200 && first.json?["inserted"]?.intValue == 6, "\(first.body)")
        let stored = try await Self.bodies(h.database)
        for (id, text) in zip(ids, sent) {
            #expect(stored[id] == (try ContractValue.parse(text)), "\(id): \(stored[id]?.text ?? "missing") for \(text)")
        }
        // Sent in two batches, the same minute is one row, its arrays in step.
        let more = Make.record(device: device, time: "2026-11-25T10:00:30.000Z")
        #expect(try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", [more]), token: token).json?["inserted"]?.intValue == 1)
        let rows = try await PostgresFixture.withClient(h.database) { c in
            var out: [[Int]] = []
            for try await (a, b, c1, d, e, f) in try await c.query("""
                SELECT cardinality(ids), cardinality(micros), cardinality(hrs), cardinality(clients), cardinality(gateways), cardinality(rest)
                FROM record_minutes
                """).decode((Int32, Int32, Int32, Int32, Int32, Int32).self) {
                out.append([a, b, c1, d, e, f].map(Int.init))
            }
            return out
        }
        #expect(rows == [[7, 7, 7, 7, 7, 7]])
        #expect(try await h.store.counts()["records"] == 7)
    }

    @Test("two gateways writing one strap's minute at once: every second has one owner, every answer adds up")
    func concurrentMinute() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let tokens = [try await h.store.addGateway("gw-a"), try await h.store.addGateway("gw-b")]
        let device = "A0:9E:1A:00:00:32"
        // Each gateway hears every second of the minute, sent as 12 batches of 5 at once.
        let answers = try await withThrowingTaskGroup(of: (inserted: Int, duplicates: Int).self) { group in
            for (g, token) in tokens.enumerated() {
                for batch in 0..<12 {
                    group.addTask {
                        let records = (0..<5).map { k in
                            Make.record(device: device, time: String(format: "2026-11-25T10:07:%02d.%03dZ", batch * 5 + k, 100 + 10 * g))
                        }
                        let a = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-\(g == 0 ? "a" : "b")", records), token: token)
                        return (a.json?["inserted"]?.intValue ?? -1, a.json?["duplicates"]?.intValue ?? -1)
                    }
                }
            }
            var all: [(inserted: Int, duplicates: Int)] = []
            for try await a in group { all.append(a) }
            return all
        }
        #expect(answers.map(\.inserted).reduce(0, +) == 60, "\(answers)")
        #expect(answers.map(\.duplicates).reduce(0, +) == 60, "\(answers)")
        let owners = try await PostgresFixture.withClient(h.database) { c in
            var out: [String: Set<String>] = [:]
            for try await (second, gateway) in try await c.query("""
                SELECT to_char(ts AT TIME ZONE 'UTC', 'SS'), gateway_id FROM records
                """).decode((String, String).self) {
                out[second, default: []].insert(gateway)
            }
            return out
        }
        #expect(owners.count == 60 && owners.values.allSatisfy { $0.count == 1 }, "\(owners)")
        #expect(try await h.store.counts()["record_minutes"] == 1)
    }

    @Test("a database from before keeps every record as sent, its member, gateway and claims")
    func migratesRecords() async throws {
        let database = try await PostgresFixture.database()
        let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        let sent = [
            Make.record(id: ids[0], time: "2025-01-31T23:59:58.000Z"),
            Make.record(id: ids[1], client: nil, time: "2025-01-31T23:59:59.250Z", hr: 95),
            #"{"id":"\#(ids[2])","client_id":"c-1","timestamp":"2025-02-01T00:00:00.5Z","device_id":"A0:9E:1A:00:00:01","source":"ble_hrm","metrics":{},"meta":{}}"#,
        ]
        try await PostgresFixture.withClient(database) { c in
            let store = ServerStore(client: c, logger: Logger(label: "storage-test"))
            #expect(try await store.migrate(through: 5) == [1, 2, 3, 4, 5])
            for (k, (id, text)) in zip(ids, sent).enumerated() {
                let record = try ContractValue.parse(text)
                let time = record["timestamp"]!.string!
                let hr = record["metrics"]?["hr"]?.number
                // The second record's member was set at ingest, from a pairing.
                let client: String? = k == 1 ? "c-9" : record["client_id"]?.string
                try await c.query("SELECT blegate_month_partition('records', \(time)::timestamptz), blegate_month_partition('record_seconds', \(time)::timestamptz)")
                try await c.query("""
                    INSERT INTO records (id, gateway_id, client_id, device_id, source, ts, hr, body)
                    VALUES (\(id)::uuid, 'gw-a', \(client), 'A0:9E:1A:00:00:01', 'ble_hrm', \(time)::timestamptz, \(hr)::real, \(text)::jsonb)
                    """)
                try await c.query("INSERT INTO record_seconds VALUES ('A0:9E:1A:00:00:01', 'ble_hrm', date_trunc('second', \(time)::timestamptz), 'gw-a')")
            }
            #expect(try await store.migrate() == [6, 7])
        }
        let stored = try await Self.bodies(database)
        for (id, text) in zip(ids, sent) {
            #expect(stored[id] == (try ContractValue.parse(text)), "\(id): \(stored[id]?.text ?? "missing")")
        }
        let h = try await ServerHarness.start(database: database)
        defer { Task { await h.stop() } }
        let members = try await PostgresFixture.withClient(database) { c in
            var out: [String: String] = [:]
            for try await (id, client) in try await c.query("SELECT id::text, client_id FROM records").decode((String, String?).self) {
                out[id] = client ?? "none"
            }
            return out
        }
        #expect(members == [ids[0]: "c-1", ids[1]: "c-9", ids[2]: "c-1"])
        // The claims came along: gw-b's record of a second gw-a owns is a duplicate, a free second is not.
        let other = try await h.store.addGateway("gw-b")
        let taken = Make.record(time: "2025-01-31T23:59:59.900Z"), free = Make.record(time: "2025-01-31T23:59:57.000Z")
        let answer = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", [taken, free]), token: other)
        #expect(answer.json?["inserted"]?.intValue == 1 && answer.json?["duplicates"]?.intValue == 1, "\(answer.body)")
    }
}
