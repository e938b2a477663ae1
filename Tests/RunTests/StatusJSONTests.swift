// SPDX-License-Identifier: MIT
import Foundation
@testable import BlegateRun
import Classes
import Testing
import WearMetrics

/// The status report, the socket's answers and the saved state: JSONEncoder with snake_case
/// keys, sorted keys and `/` escaped, the text clients and saved state already hold.
@Suite("Status JSON: snake_case, sorted keys, escaped slashes")
struct StatusJSONTests {
    static func sample() -> StatusReport {
        var r = StatusReport(source: "service", gatewayID: "gym-1", generatedAt: "2026-11-25T10:42:07.125Z",
                             cacheFile: "/var/lib/blegate/cache.sqlite",
                             outbox: .init(pending: 12, unpairedPending: 3, unpairedPolicy: "hold", delivered: 40_000, quarantined: 1,
                                           total: 40_013, oldestPendingAgeSeconds: 12.3, oldestPendingTimestamp: "2026-11-25T10:41:55Z",
                                           buffered: 0, fileBytes: 1 << 33, pendingWorkouts: 2, pendingProfileMetrics: 0,
                                           quarantinedDocuments: 0, writeProblem: "disk full since 10:42:07 UTC, \"held\"\n", dropped: nil,
                                           prunedForSpace: 5))
        r.startedAt = "2026-11-25T08:00:00Z"
        r.devices = [
            .init(address: "A0:9E:1A:10:0A:E2", name: "Polar H10 C9D3F516 é", adapter: "hci0", state: "streaming", reason: nil, connected: true,
                  lastHeartRate: 131, battery: 80, rssi: -61, reconnects: 0, notifications: 4210, malformed: 0, tooFast: 0, oversized: 0,
                  rrDropped: 2, flag: nil, model: "H10", firmware: "3.1.1", lastSeen: nil, paired: true),
            .init(address: "D8:84:6E:EB:35:59", name: nil, adapter: nil, state: "offline", reason: "the gateway is not running", connected: false,
                  lastHeartRate: nil, battery: nil, rssi: nil, reconnects: nil, notifications: nil, malformed: nil, tooFast: nil,
                  oversized: nil, rrDropped: nil, flag: nil, model: nil, firmware: nil, lastSeen: "2026-11-24T19:00:00Z", paired: false),
        ]
        r.adapterRecoveries = ["hci0": 0, "hci1": 2, "hci10": 1]
        r.notifyWindowMilliseconds = 200
        r.adapters = [.init(adapter: "hci0", links: 4, connecting: 1, limit: 4, learnedLimit: 4, maxLinks: 7, probing: false, devices: 31)]
        r.sync = .init(state: "backing_off", reason: "HTTP 503", endpoint: "http://127.0.0.1:8080/api/v1/metrics", consecutiveFailures: 2,
                       deliveredSinceStart: 9, quarantinedSinceStart: 0, workoutsDeliveredSinceStart: 1, profileMetricsDeliveredSinceStart: 0,
                       lastSync: .init(at: "2026-11-25T10:42:00Z", records: 9, inserted: 8, duplicates: 1, rejected: 0,
                                       durationMilliseconds: 41.5, endpoint: "/api/v1/metrics", httpStatus: 503, error: nil))
        r.errors = [ErrorEntry(at: UTCTimestamp(millisecondsSince1970: 1_764_067_327_000), category: .backend, message: "backend answered 503",
                               detail: "tab\there")]
        return r
    }

    static func foundationJSON<T: Encodable>(_ value: T) throws -> String {
        let e = JSONEncoder()
        e.keyEncodingStrategy = .convertToSnakeCase
        e.outputFormatting = [.sortedKeys]
        return String(decoding: try e.encode(value), as: UTF8.self)
    }

    @Test("a full status report: byte for byte JSONEncoder's text, and read back to the same report")
    func statusReport() throws {
        let report = Self.sample()
        let json = report.json()
        #expect(json == (try Self.foundationJSON(report)))
        #expect(json.hasPrefix(#"{"adapter_recoveries":{"hci0":0,"hci1":2,"hci10":1},"adapters":[{"adapter":"hci0","connecting":1,"#), "\(json)")
        #expect(json.contains("\"cache_file\":\"\\/var\\/lib\\/blegate\\/cache.sqlite\""))
        #expect(try StatusReport(json: json) == report)
    }

    @Test("the saved state the stopped gateway's status reads: the same bytes as Foundation's encoder writes, read back")
    func savedState() throws {
        let report = Self.sample()
        let state = SavedServiceState(startedAt: "a", savedAt: "b", sync: report.sync, errors: report.errors)
        let ours = StatusReport.text(state)
        #expect(ours == (try Self.foundationJSON(state)))
        let back = try StatusReport.decoder.decode(SavedServiceState.self, from: Data(ours.utf8))
        #expect(back.sync == report.sync && back.errors == report.errors && back.savedAt == "b")
    }

    @Test("a socket answer and a request line: sorted keys, escaped slashes, as JSONSerialization writes them; read back")
    func answersAndRequests() throws {
        let answer = StatusAnswer(ok: true, assigned: 3, error: "a/b \"c\"")
        let expected = try JSONSerialization.data(withJSONObject: ["ok": true, "assigned": 3, "error": "a/b \"c\""] as [String: Any],
                                                  options: [.sortedKeys])
        #expect(answer.line == String(decoding: expected, as: UTF8.self))
        #expect(try StatusAnswer(line: answer.line) == answer)
        let line = StatusRequest.pair(address: "A0:9E:1A:10:0A:E2", clientID: "m/1").line
        #expect(line == "{\"address\":\"A0:9E:1A:10:0A:E2\",\"client_id\":\"m\\/1\",\"command\":\"pair\"}\n")
        #expect(try StatusRequest.parse(Array(line.utf8.dropLast())) == .pair(address: "A0:9E:1A:10:0A:E2", clientID: "m/1"))
    }

    @Test("class answers: null when none runs, the class with snake_case keys when one does")
    func classAnswers() throws {
        let none = StatusAnswer(aboutClass: true, classReport: nil)
        #expect(none.line == #"{"class":null}"#)
        let read = try StatusAnswer(line: none.line)
        #expect(read.aboutClass && read.classReport == nil)
        var report = ClassReport(ClassSession(key: "k", name: "Spin/07", type: .cycle, origin: .manual, startMs: 0))
        report.plannedEndTime = "1970-01-01T00:45:00.000Z"
        let running = StatusAnswer(ok: true, classReport: report)
        #expect(running.line == #"{"class":{"name":"Spin\/07","origin":"manual","planned_end_time":"1970-01-01T00:45:00.000Z","start_time":"1970-01-01T00:00:00.000Z","type":"cycle"},"ok":true}"#)
        #expect(try StatusAnswer(line: running.line) == running)
        #expect(try StatusAnswer(line: #"{"ok":true}"#).aboutClass == false)
    }

    @Test("bad request lines are refused with the protocol's hint: not JSON, not an object, not UTF-8")
    func badRequests() throws {
        for bad: [UInt8] in [Array("{\"command\":".utf8), Array("[\"status\"]".utf8), [0x7B, 0xFF, 0x7D]] {
            #expect(throws: StatusRequest.ParseError.self) { try StatusRequest.parse(bad) }
        }
        #expect(try StatusRequest.parse(Array("{\"command\":\"class_start\",\"name\":\"Spin\"}".utf8)) == .classStart(name: "Spin", type: "other"))
    }
}
