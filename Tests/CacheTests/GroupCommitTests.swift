// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Cache
import Foundation
import GRDB
import Outbox
import Testing
import Timing
import WearMetrics

@Suite("Group commit and durability")
struct GroupCommitTests {
    @Test("N waiting records commit at once, even with a long interval")
    func commitsOnCount() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .seconds(3600), groupCommitRecords: 50))
        let log = CommitLog()
        cache.onCommit { log.add($0) }
        var sequences: [Int64] = []
        for i in 0..<50 { sequences.append(cache.append(hrRecord("AA:00:00:00:00:01", i))) }
        let last = sequences[49]
        // No flush: only the count threshold can commit within the timeout.
        try await withTimeout { try await cache.waitUntilCommitted(last) }
        #expect(log.events.reduce(0) { $0 + $1.count } == 50)
        #expect(try await cache.stats().total == 50)
    }

    @Test("a lone record commits after the interval")
    func commitsOnTime() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .milliseconds(50), groupCommitRecords: 100_000))
        let seq = cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await withTimeout { try await cache.waitUntilCommitted(seq) }
        #expect(try await cache.stats().pending == 1)
    }

    @Test("the interval counts from the notification's arrival: a record handed over late commits when its interval is up")
    func intervalFromArrival() async throws {
        let dir = TempDir()
        // An hour's interval: only a record whose arrival is counted can be committed
        // within the timeout; it arrived all but one second of the hour ago.
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .seconds(3600), groupCommitRecords: 100_000))
        let arrived = UTCTimestamp(millisecondsSince1970: WallClock.milliseconds() - 3_599_000)
        let seq = cache.append(hrRecord("AA:00:00:00:00:01", 0, at: arrived))
        try await withTimeout { try await cache.waitUntilCommitted(seq) }
        #expect(try await cache.stats().pending == 1)
    }

    @Test("a record older than those waiting brings the commit forward: the interval counts from the earliest arrival buffered")
    func intervalFromEarliestArrival() async throws {
        let dir = TempDir()
        // An hour's interval. The first record arrived now: alone, it would wait the hour.
        // The second, appended after it (a later reader round), arrived all but one second
        // of the hour ago: the commit is due in a second, and takes both.
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .seconds(3600), groupCommitRecords: 100_000))
        let log = CommitLog()
        cache.onCommit { log.add($0) }
        _ = cache.append(hrRecord("AA:00:00:00:00:01", 0, at: .now))
        let arrived = UTCTimestamp(millisecondsSince1970: WallClock.milliseconds() - 3_599_000)
        let seq = cache.append([hrRecord("AA:00:00:00:00:02", 1, at: arrived)])
        try await withTimeout { try await cache.waitUntilCommitted(seq) }
        #expect(log.events.map(\.sequences) == [1...2])
    }

    @Test("records appended together share one transaction; sequences are contiguous")
    func oneTransaction() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .milliseconds(20), groupCommitRecords: 100_000))
        let log = CommitLog()
        cache.onCommit { log.add($0) }
        let last = cache.append((0..<1000).map { hrRecord("AA:00:00:00:00:0\($0 % 4)", $0) })
        try await withTimeout { try await cache.waitUntilCommitted(last) }
        let events = log.events
        #expect(events.count == 1)
        #expect(events.first?.sequences == 1...1000)
    }

    @Test("flush() returns only once everything appended before it is committed")
    func flushCommitsAll() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .seconds(3600), groupCommitRecords: 1_000_000))
        for i in 0..<777 { cache.append(hrRecord("AA:00:00:00:00:01", i)) }
        try await withTimeout { try await cache.flush() }
        #expect(cache.bufferedCount == 0)
        #expect(try await cache.stats().total == 777)
    }

    @Test("records acknowledged by flush() survive a kill: the files as they are on disk open with all of them")
    func crashSafety() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .seconds(3600), groupCommitRecords: 1_000_000))
        let records = (0..<500).map { hrRecord("AA:00:00:00:00:0\($0 % 3)", $0) }
        cache.append(records)
        try await withTimeout { try await cache.flush() }
        // The writer is still running and has not checkpointed or closed: copy the
        // database and its WAL as a SIGKILL would leave them, and open the copy.
        let crashed = dir.path + "/crashed"
        try FileManager.default.createDirectory(atPath: crashed, withIntermediateDirectories: true)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: dir.database + suffix) {
            try FileManager.default.copyItem(atPath: dir.database + suffix, toPath: crashed + "/cache.sqlite" + suffix)
        }
        let reopened = try RecordCache(path: crashed + "/cache.sqlite", options: CacheOptions(create: false))
        let stored = try await reopened.storedRecords(limit: 1000)
        #expect(stored.count == 500)
        #expect(stored.map(\.record) == records)
        #expect(stored.map(\.sequence) == Array(1...500))
        // New sequences continue after the old ones.
        let next = reopened.append(hrRecord("AA:00:00:00:00:09", 0))
        #expect(next == 501)
        try await reopened.close()
    }

    @Test("reopening keeps ids and sequences; close() commits what is buffered")
    func reopen() async throws {
        let dir = TempDir()
        var ids: [String] = []
        do {
            let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .seconds(3600)))
            cache.append((0..<10).map { hrRecord("AA:00:00:00:00:01", $0) })
            try await cache.close()
            ids = try await cache.storedRecords().map(\.id)
        }
        #expect(ids.count == 10)
        #expect(Set(ids).count == 10)
        #expect(ids.allSatisfy { $0.count == 36 && $0 == $0.lowercased() && Array($0)[14] == "7" })
        let again = try RecordCache(path: dir.database)
        #expect(try await again.storedRecords().map(\.id) == ids)
        #expect(again.append(hrRecord("AA:00:00:00:00:01", 11)) == 11)
        try await again.close()
    }

    @Test("a second handle reads while the first keeps writing (WAL)")
    func concurrentReader() async throws {
        let dir = TempDir()
        let writer = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .milliseconds(5), groupCommitRecords: 100))
        writer.append(hrRecord("AA:00:00:00:00:01", 0))
        try await writer.flush()
        // A plain read-only SQLite connection, as another process would open it.
        let reader = try RawConnection(path: dir.database, readOnly: true)
        let mode = try reader.scalarText("PRAGMA journal_mode")
        #expect(mode == "wal")
        var seen: [Int] = []
        for round in 1...20 {
            let seq = writer.append((0..<200).map { hrRecord("AA:00:00:00:00:01", round * 1000 + $0) })
            seen.append(Int(try reader.scalarInt64("SELECT count(*) FROM record") ?? -1))
            try await withTimeout { try await writer.waitUntilCommitted(seq) }
        }
        let final = try reader.scalarInt64("SELECT count(*) FROM record")
        #expect(final == Int64(1 + 20 * 200))
        #expect(seen == seen.sorted())
        try await writer.close()
    }

    @Test("a failing commit keeps the records buffered, flush() reports it, and the retry writes them all")
    func failedCommitIsRetried() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .milliseconds(10)))
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.flush()
        // Another connection makes every insert fail, as a full disk would.
        let other = try RawConnection(path: dir.database)
        try other.execute("CREATE TRIGGER refuse BEFORE INSERT ON record BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
        let records = (1...50).map { hrRecord("AA:00:00:00:00:01", $0) }
        cache.append(records)
        await #expect {
            try await cache.flush()
        } throws: { e in
            (e as? CacheError)?.code == .writeFailed && "\(e)".contains("disk says no") && "\(e)".contains("stay buffered")
        }
        // Nothing of the batch reached the database, and nothing was dropped either (below).
        #expect(try await cache.stats().total == 1)
        try other.execute("DROP TRIGGER refuse")
        try await withTimeout { try await cache.flush() }
        let stored = try await cache.storedRecords(limit: 100)
        #expect(stored.map(\.record) == [hrRecord("AA:00:00:00:00:01", 0)] + records)
        #expect(stored.map(\.sequence) == Array(1...51))
        try await cache.close()
    }

    @Test("records of a commit under way still count as buffered until they are on disk")
    func commitUnderWayCountsAsBuffered() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(groupCommitInterval: .milliseconds(10), busyTimeout: .seconds(30)))
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.flush()
        // Another connection holds the write lock: the writer takes the next batch out of
        // its buffer and waits in its commit.
        let other = try RawConnection(path: dir.database)
        try other.execute("BEGIN IMMEDIATE")
        let records = (1...20).map { hrRecord("AA:00:00:00:00:01", $0) }
        cache.append(records)
        // Once the batch is in the writer's hands, zero here would tell a caller (status,
        // a test before SIGKILL) that nothing waits in memory while the records are not yet
        // on disk.
        #expect(await eventually(timeout: 30) { cache.writeHealth.committing == 20 }, "\(cache.writeHealth)")
        #expect(cache.bufferedCount == 20)
        #expect(cache.writeHealth.buffered == 20)
        try other.execute("COMMIT")
        try await withTimeout { try await cache.flush() }
        #expect(cache.bufferedCount == 0)
        #expect(try await cache.storedRecords(limit: 100).map(\.record) == [hrRecord("AA:00:00:00:00:01", 0)] + records)
        try await cache.close()
    }

    @Test("opening a missing cache without create names the path")
    func noCache() throws {
        let dir = TempDir()
        #expect {
            try RecordCache(path: dir.path + "/none.sqlite", options: CacheOptions(create: false))
        } throws: { e in
            (e as? CacheError)?.code == .noCache && "\(e)".contains("none.sqlite")
        }
    }

    @Test("the database is in WAL mode with incremental auto-vacuum")
    func pragmas() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        try await cache.close()
        let db = try RawConnection(path: dir.database)
        let (mode, vacuum) = (try db.scalarText("PRAGMA journal_mode"), try db.scalarInt64("PRAGMA auto_vacuum"))
        #expect(mode == "wal")
        #expect(vacuum == 2)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.database)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
