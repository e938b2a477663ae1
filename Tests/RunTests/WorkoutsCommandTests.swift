// SPDX-License-Identifier: MIT
import BackendContract
import BlegateTestSupport
import Cache
import Outbox
import Testing
import TestBackend

/// `blegate workouts` reading a cache file with workouts in every delivery state.
@Suite("blegate workouts")
struct WorkoutsCommandTests {
    static func id(_ n: Int) -> String { "6a1f0c2e-0000-4000-8000-00000000000\(n)" }
    static func device(_ n: Int) -> String { "A0:9E:1A:00:00:0\(n)" }

    /// A contract-shaped workout; workout `n` starts `n` hours into the day.
    static func workout(_ n: Int, avg: Double = 131.5) -> String {
        """
        {"id":"\(id(n))","client_id":"member-\(n)","source":"blegate","gateway_id":"test-gym","device_id":"\(device(n))",\
        "workout_type":"cycle","class_name":"Spin 0\(n):00","start_time":"2026-11-25T0\(n):00:00.000Z",\
        "end_time":"2026-11-25T0\(n):45:00.000Z","duration_seconds":2700,"calories_active":null,\
        "avg_heart_rate":\(avg),"max_heart_rate":172,"min_heart_rate":88,"seconds_in_zone":[60,300,900,900,400,140],\
        "effort_points":40.1,"trimp":80.2,"coverage":0.98,\
        "formulas":{"zones":"pct-max-50-60-70-80-90/v1","kcal":"keytel-2005/v1","points":"blegate-points/v1"},"source_device":"Polar H10"}
        """
    }

    @Test("delivered, pending, a pending correction and a refused workout each show their delivery state, in the table and in --json")
    func deliveryStates() async throws {
        let f = try RunFixture()
        try f.writeConfig(backendURL: nil)
        let cache = try RecordCache(path: f.dir + "/cache.sqlite")
        for n in 1...4 { try await cache.putDocument(kind: .workout, id: Self.id(n), json: Self.workout(n)) }
        try await cache.markDocumentsDelivered(kind: .workout, [DocumentRevision(id: Self.id(1), revision: 1), DocumentRevision(id: Self.id(3), revision: 1)])
        // Workout 3 corrected after it was delivered: revision 2 waits for the backend.
        try await cache.putDocument(kind: .workout, id: Self.id(3), json: Self.workout(3, avg: 133.0))
        let reason = "seconds_in_zone: must add up to duration_seconds (2700), got 2690"
        try await cache.quarantineDocuments(kind: .workout, [DocumentRejection(id: Self.id(4), revision: 1, reason: reason)])
        try await cache.close()

        let table = await f.cli("workouts")
        #expect(table.status == 0, "\(table.out)")
        let rows = table.out.split(separator: "\n").map(String.init)
        #expect(rows.first?.hasPrefix("ID") == true && rows.count == 5, "\(table.out)")
        // Newest first, one row per workout, each with its own delivery.
        #expect(rows.dropFirst().map { r in (1...4).first { r.contains(Self.device($0)) } ?? 0 } == [4, 3, 2, 1], "\(table.out)")
        func row(_ n: Int) -> String { rows.first { $0.contains(Self.device(n)) } ?? "" }
        // Each row leads with the workout's whole id (the ids share their first 8 characters)
        // and gives its start as local time with the offset.
        for n in 1...4 {
            #expect(row(n).hasPrefix(Self.id(n) + " "), "\(row(n))")
            #expect(row(n).contains(#/ 2026-11-2[45]T\d\d:\d\d:00[+-]\d\d:\d\d /#), "\(row(n))")
        }
        #expect(row(1).hasSuffix("  delivered"), "\(row(1))")
        #expect(row(2).hasSuffix("  pending"), "\(row(2))")
        #expect(row(3).hasSuffix("  pending (revision 2)") && row(3).contains(" 133 "), "\(row(3))")
        #expect(row(4).contains("  refused: seconds_in_zone: must add up to") && row(4).hasSuffix("…"), "\(row(4))")

        let lines = await f.cli("workouts --json")
        #expect(lines.status == 0)
        let objects = try lines.out.split(separator: "\n").map { try ContractValue.parse(Array($0.utf8)) }
        #expect(objects.count == 4)
        let byID = Dictionary(uniqueKeysWithValues: objects.compactMap { o in o["id"]?.string.map { ($0, o) } })
        #expect(byID[Self.id(1)]?["delivery"]?.string == "delivered" && byID[Self.id(1)]?["revision"]?.number == 1)
        #expect(byID[Self.id(2)]?["delivery"]?.string == "pending" && byID[Self.id(2)]?["reason"] == nil)
        #expect(byID[Self.id(3)]?["delivery"]?.string == "pending" && byID[Self.id(3)]?["revision"]?.number == 2)
        #expect(byID[Self.id(3)]?["avg_heart_rate"]?.number == 133)
        #expect(byID[Self.id(4)]?["delivery"]?.string == "quarantined" && byID[Self.id(4)]?["reason"]?.string == reason)

        let one = await f.cli("workouts --class \"Spin 02:00\"")
        #expect(one.out.split(separator: "\n").count == 2 && one.out.contains(Self.device(2)) && one.out.contains("pending"),
                "\(one.out)")
    }
}
