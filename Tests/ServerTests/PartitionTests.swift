// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// Records, with their second claims, are partitioned by UTC month: each record lands in its
/// month's partition (made on first need, also by many requests at once), a replay stays a
/// duplicate, retention drops a whole month, and a database from before partitioning keeps
/// its records through the migrations.
@Suite("blegate-server: records partitioned by month")
struct PartitionTests {
    /// The partition of every stored record, by id.
    static func placement(_ database: DatabaseURL) async throws -> [String: String] {
        try await PostgresFixture.withClient(database) { c in
            var records: [String: String] = [:]
            for try await (part, id) in try await c.query("SELECT tableoid::regclass::text, unnest(ids)::text FROM record_minutes")
                .decode((String, String).self) {
                records[id] = part
            }
            return records
        }
    }

    @Test("two months land in two partitions (the month in UTC, whatever the offset), replays are duplicates, retention drops a whole month")
    func twoMonths() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        let jan = UUID().uuidString.lowercased(), janOffset = UUID().uuidString.lowercased(), feb = UUID().uuidString.lowercased()
        let records = [
            Make.record(id: jan, time: "2025-01-31T23:59:59.500Z"),
            // 00:30 in Paris on the 1st of February is still January in UTC.
            Make.record(id: janOffset, device: "A0:9E:1A:00:00:02", time: "2025-02-01T00:30:00.000+01:00"),
            Make.record(id: feb, time: "2025-02-01T00:00:00.250Z"),
        ]
        let first = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", records), token: token)
        #expect(first.status == 200 && first.json?["inserted"]?.intValue == 3, "\(first.body)")
        var placed = try await Self.placement(h.database)
        #expect(placed == [jan: "record_minutes_2025_01", janOffset: "record_minutes_2025_01", feb: "record_minutes_2025_02"])

        // A replay meets the (id, ts) key in its month: nothing twice.
        let replay = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", records), token: token, gzip: false)
        #expect(replay.json?["inserted"]?.intValue == 0 && replay.json?["duplicates"]?.intValue == 3, "\(replay.body)")
        #expect(try await h.store.counts()["records"] == 3)
        // Another gateway's record of a second gw-a owns stays a duplicate across the month boundary too.
        let other = try await h.store.addGateway("gw-b")
        let heardTwice = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", [Make.record(time: "2025-02-01T00:00:00.750Z")]), token: other)
        #expect(heardTwice.json?["duplicates"]?.intValue == 1)

        let names = try await h.store.partitions().map(\.name)
        #expect(names == ["record_minutes_2025_01", "record_minutes_2025_02"])

        // Retention on 2026-02-10 keeping 12 whole months of records: January 2025 goes as a
        // whole, February stays.
        let dropped = try await h.store.applyRetention(recordMonths: 12, now: "2026-02-10T12:00:00Z")
        #expect(dropped.map(\.name) == ["record_minutes_2025_01"])
        placed = try await Self.placement(h.database)
        #expect(placed == [feb: "record_minutes_2025_02"])
        #expect(try await h.store.partitions().map(\.name) == ["record_minutes_2025_02"])
        // The kept month still refuses a replay, and another gateway's record of its seconds.
        let late = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", [records[2]]), token: token)
        #expect(late.json?["inserted"]?.intValue == 0 && late.json?["duplicates"]?.intValue == 1, "\(late.body)")
        let stillOwned = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-b", [Make.record(time: "2025-02-01T00:00:00.900Z")]), token: other)
        #expect(stillOwned.json?["duplicates"]?.intValue == 1, "\(stillOwned.body)")
        await #expect(throws: ServerStore.AdminError.self) { try await h.store.dropPartitions(of: .records, before: "2025-13") }
    }

    @Test("a month first needed by 12 requests at once is made once, and every request is stored")
    func concurrentNewMonth() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<12 {
                group.addTask {
                    let records = (0..<5).map { k in
                        Make.record(device: "A0:9E:1A:00:01:\(String(format: "%02d", i))", time: "2025-03-0\(k + 1)T08:00:00.000Z")
                    }
                    let a = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", records), token: token)
                    return a.status == 200 ? a.json?["inserted"]?.intValue ?? -1 : -a.status
                }
            }
            var all: [Int] = []
            for try await a in group { all.append(a) }
            return all
        }
        #expect(answers == Array(repeating: 5, count: 12), "\(answers)")
        #expect(try await h.store.partitions().map(\.name) == ["record_minutes_2025_03"])
        #expect(try await h.store.counts()["records"] == 60)
    }

    @Test("`blegate-server retention` drops the months before what it keeps and names them")
    func retentionCommand() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway("gw-a")
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let now = format.string(from: Date())
        let records = [Make.record(time: "2024-06-15T10:00:00.000Z"), Make.record(time: now)]
        #expect(try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", records), token: token).json?["inserted"]?.intValue == 2)
        let thisMonth = "record_minutes_" + now.prefix(7).replacingOccurrences(of: "-", with: "_")

        let command = "'\(ServerProcess.binary)' retention --database-url '\(h.database)'"
        let refused = await shell(command + " --record-months=-1 2>&1")
        #expect(refused.status != 0 && refused.out.contains("must not be negative"), "\(refused.out)")
        let run = await shell(command + " --record-months 13 --claim-months 1 2>&1")
        #expect(run.status == 0, "\(run.out)")
        #expect(run.out.split(separator: "\n").filter { $0.hasPrefix("dropped ") } == ["dropped record_minutes_2024_06"], "\(run.out)")
        #expect(try await h.store.partitions().map(\.name).contains(thisMonth))
        #expect(try await h.store.counts()["records"] == 1)
        let again = await shell(command + " 2>&1")
        #expect(again.status == 0 && again.out.contains("nothing to drop"), "\(again.out)")
    }

    @Test("a database from before partitioning keeps every record and claim through the migration")
    func migratesExistingRecords() async throws {
        let database = try await PostgresFixture.database()
        let ids = (0..<4).map { _ in UUID().uuidString.lowercased() }
        let times = ["2024-12-31T23:59:59.000Z", "2025-01-01T00:00:00.000Z", "2025-01-15T12:00:00.000Z", "2025-03-01T00:00:00.000Z"]
        try await PostgresFixture.withClient(database) { c in
            let store = ServerStore(client: c, logger: Logger(label: "partition-test"))
            #expect(try await store.migrate(through: 1) == [1])
            for (id, t) in zip(ids, times) {
                try await c.query("""
                    INSERT INTO records (id, gateway_id, device_id, source, ts, body) VALUES (\(id)::uuid, 'gw-a', 'd', 'ble_hrm', \(t)::timestamptz, '{}')
                    """)
                try await c.query("INSERT INTO record_seconds VALUES ('d', 'ble_hrm', \(t)::timestamptz, 'gw-a')")
            }
            #expect(try await store.migrate(through: 2) == [2])
            #expect(try await store.migrate(through: 2).isEmpty)
            #expect(try await store.migrate() == [3, 4, 5, 6, 7])
        }
        let placed = try await Self.placement(database)
        #expect(placed == [ids[0]: "record_minutes_2024_12", ids[1]: "record_minutes_2025_01", ids[2]: "record_minutes_2025_01",
                           ids[3]: "record_minutes_2025_03"])
    }
}
