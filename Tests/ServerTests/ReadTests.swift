// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import Foundation
import Testing

/// What staff and coaches read back: paged history and the CSV export.
@Suite("blegate-server reads")
struct ReadTests {
    @Test("heart rate and workouts page with a cursor: every item once, in order; from/to bound the heart rate")
    func paging() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let a = try await h.store.addGateway("gw-a")
        let records = (0..<25).map { i in Make.record(time: String(format: "2026-11-25T10:%02d:00.000Z", i), hr: 100 + i) }
        _ = try await h.send("/api/v1/metrics", Make.metrics(gateway: "gw-a", records), token: a)
        var seen: [Int] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await h.get("/api/v1/members/c-1/heart-rate?limit=10" + (cursor.map { "&cursor=\($0)" } ?? "")).json
            seen += page?["heart_rate"]?.array?.compactMap { $0["hr"]?.intValue } ?? []
            cursor = page?["next_cursor"]?.string
            pages += 1
        } while cursor != nil && pages < 10
        #expect(seen == Array(100..<125))
        #expect(pages == 3)
        let bounded = try await h.get("/api/v1/members/c-1/heart-rate?from=2026-11-25T10:05:00.000Z&to=2026-11-25T10:08:00.000Z").json
        #expect(bounded?["heart_rate"]?.array?.compactMap { $0["hr"]?.intValue } == [105, 106, 107])
        #expect(try await h.get("/api/v1/members/c-1/heart-rate?cursor=garbage").status == 400)
        #expect(try await h.get("/api/v1/members/c-1/heart-rate?limit=0").status == 400)

        let workouts = (0..<7).map { d in
            Make.workout(gateway: "gw-a", start: "2026-11-1\(d)T07:00:00.000Z", end: "2026-11-1\(d)T07:45:00.000Z", duration: 2700)
        }
        _ = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", workouts), token: a)
        var starts: [String] = []
        cursor = nil
        pages = 0
        repeat {
            let page = try await h.get("/api/v1/members/c-1/workouts?limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")).json
            starts += page?["workouts"]?.array?.compactMap { $0["start_time"]?.string } ?? []
            cursor = page?["next_cursor"]?.string
            pages += 1
        } while cursor != nil && pages < 10
        #expect(starts == (0..<7).reversed().map { "2026-11-1\($0)T07:00:00.000Z" })
        #expect(pages == 3)
        #expect(try await h.get("/api/v1/members/nobody/workouts").json?["workouts"]?.array?.isEmpty == true)
    }

    @Test("the CSV export: a header, one row per merged workout, quoting and formula-safe class names")
    func csv() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let a = try await h.store.addGateway("gw-a")
        let w1 = Make.workout(gateway: "gw-a", className: "=HYPERLINK(\\\"x\\\")", start: "2026-11-24T07:00:00.000Z", end: "2026-11-24T07:45:00.000Z", duration: 2700)
        let w2 = Make.workout(gateway: "gw-a", className: "Spin, advanced", start: "2026-11-25T07:00:00.000Z", end: "2026-11-25T07:30:00.000Z", duration: 1800, kcal: nil)
        let sent = try await h.send("/api/v1/workouts", Make.workouts(gateway: "gw-a", [w1, w2]), token: a)
        #expect(sent.json?["inserted"]?.intValue == 2)
        let answer = try await h.get("/api/v1/members/c-1/workouts.csv")
        #expect(answer.status == 200)
        #expect(answer.headers.contains { $0.0.lowercased() == "content-type" && $0.1.hasPrefix("text/csv") })
        let lines = answer.body.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("id,class_name,workout_type,start_time,end_time,duration_seconds,calories_active"))
        #expect(lines[1].contains(",\"Spin, advanced\",hiit,2026-11-25T07:00:00.000Z,2026-11-25T07:30:00.000Z,1800,,"))
        #expect(lines[2].contains(",\"'=HYPERLINK(\"\"x\"\")\",hiit,"))
    }
}
