// SPDX-License-Identifier: MIT
@testable import BlegateRun
import Sync
import Testing
import WearMetrics

@Suite("status: the last errors")
struct ErrorLogTests {
    func entry(_ ms: Int64, _ message: String, _ category: ErrorCategory = .bluetooth) -> ErrorEntry {
        ErrorEntry(at: UTCTimestamp(millisecondsSince1970: ms), category: category, message: message)
    }

    @Test("errors saved by a previous run come first, and the log stays at the last 10")
    func restoreKeepsTheLastTen() {
        let log = ErrorLog()
        log.add(.storage, "now")
        log.restore((0..<12).map { entry(1_000 + Int64($0), "before \($0)") })
        let all = log.all
        #expect(all.count == ErrorLog.capacity)
        #expect(all.last?.message == "now")
        #expect(all.first?.message == "before 3")
        #expect(all.dropLast().map(\.message) == (3..<12).map { "before \($0)" })
    }

    @Test("merged with the sync engine's errors by time, oldest first")
    func mergedByTime() {
        let own = [entry(1_000, "a"), entry(3_000, "c")]
        let sync = [SyncErrorEntry(at: UTCTimestamp(millisecondsSince1970: 2_000), category: .backend,
                                   message: "b", httpStatus: 503)]
        let merged = ErrorLog.merged(own, sync: sync)
        #expect(merged.map(\.message) == ["a", "b", "c"])
        #expect(merged[1].category == "backend")
        #expect(merged[1].detail == "HTTP 503")
    }
}
