// SPDX-License-Identifier: MIT
import Foundation
import SQLite
import Testing

/// A database file in a directory removed at deinit.
private final class TempDatabase: @unchecked Sendable {
    let directory: String
    init() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-sqlite-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: directory) }
    var path: String { directory + "/test.sqlite" }
}

@Suite("SQLite layer")
struct SQLiteTests {
    @Test("every type binds and reads back as stored; an empty blob is not NULL")
    func roundTrip() throws {
        let tmp = TempDatabase()
        let db = try Connection(path: tmp.path)
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [Int64.max, 2.5, "héllo ✓", [0, 1, 255] as [UInt8], String?.none])
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [-1, -0.5, "", [UInt8](), true])
        try db.execute("INSERT INTO t (i, s) VALUES (?, ?)", [7, "a\u{0}b"])
        #expect(try db.scalarText("SELECT s FROM t WHERE i = 7") == "a\u{0}b")
        #expect(try db.scalarInt64("SELECT length(CAST(s AS BLOB)) FROM t WHERE i = 7") == 3)
        try db.execute("DELETE FROM t WHERE i = 7")
        let rows = try db.rows("SELECT i, r, s, b, n FROM t ORDER BY rowid") { s in
            [s.value(0), s.value(1), s.value(2), s.value(3), s.value(4)]
        }
        #expect(rows[0] == [.integer(Int64.max), .real(2.5), .text("héllo ✓"), .blob([0, 1, 255]), .null])
        #expect(rows[1] == [.integer(-1), .real(-0.5), .text(""), .blob([]), .integer(1)])
        #expect(try db.scalarInt64("SELECT count(*) FROM t WHERE b IS NOT NULL") == 2)
        #expect(try db.scalarText("SELECT s FROM t WHERE i = ?", [Int64.max]) == "héllo ✓")
        #expect(try db.scalarBlob("SELECT b FROM t WHERE i = -1") == [])
        #expect(try db.scalarInt64("SELECT n FROM t WHERE i = ?", [Int64.max]) == nil)
    }

    @Test("errors carry SQLite's extended code, its message and the SQL")
    func errors() throws {
        let tmp = TempDatabase()
        let db = try Connection(path: tmp.path)
        try db.execute("CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL)")
        try db.execute("INSERT INTO t VALUES (?)", ["a"])
        let unique = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?)", ["a"]) }
        #expect(unique?.code == 1555)   // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(unique?.primaryCode == 19)
        #expect(unique?.message.contains("UNIQUE constraint failed") == true)
        #expect(unique?.sql == "INSERT INTO t VALUES (?)")
        let syntax = #expect(throws: SQLiteError.self) { try db.execute("SELEC 1") }
        #expect(syntax?.code == 1)
        #expect(syntax?.description.contains("syntax error") == true)
        #expect(syntax?.isDiskFull == false)
    }

    @Test("a database that cannot grow fails with SQLITE_FULL, which counts as disk full")
    func full() throws {
        let tmp = TempDatabase()
        let db = try Connection(path: tmp.path)
        try db.execute("CREATE TABLE t (b BLOB)")
        try db.execute("PRAGMA max_page_count = \(try db.scalarInt64("PRAGMA page_count") ?? 2)")
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction { try db.execute("INSERT INTO t VALUES (?)", [[UInt8](repeating: 7, count: 100_000)]) }
        }
        #expect(error?.primaryCode == 13)
        #expect(error?.isDiskFull == true)
        #expect(!db.inTransaction)
        #expect(try db.scalarInt64("SELECT count(*) FROM t") == 0)
    }

    @Test("a transaction commits when its body returns and rolls back when it throws")
    func transactions() throws {
        struct Stop: Error {}
        let tmp = TempDatabase()
        let db = try Connection(path: tmp.path)
        try db.execute("CREATE TABLE t (x INTEGER)")
        try db.transaction { try db.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: Stop.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Stop()
            }
        }
        #expect(try db.rows("SELECT x FROM t") { $0.int(0) } == [1])
        #expect(!db.inTransaction)
    }

    @Test("a cached statement is prepared once and comes back reset")
    func cachedStatements() throws {
        let tmp = TempDatabase()
        let db = try Connection(path: tmp.path)
        try db.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)")
        let a = try db.cachedStatement("SELECT x FROM t ORDER BY x")
        try a.bind([])
        #expect(try a.step())
        #expect(a.int(0) == 1)
        let b = try db.cachedStatement("SELECT x FROM t ORDER BY x")
        #expect(a === b)
        #expect(try b.step())
        #expect(b.int(0) == 1)
        b.reset()
        let insert = try db.cachedStatement("INSERT INTO t VALUES (?)")
        for x in 4...6 { try insert.execute([x]) }
        #expect(try db.scalarInt64("SELECT sum(x) FROM t") == 21)
    }

    @Test("in WAL mode a reader's queue reads the last commit while the writer holds its transaction open")
    func readerNeverWaits() async throws {
        let tmp = TempDatabase()
        let writerConnection = try Connection(path: tmp.path)
        #expect(try writerConnection.scalarText("PRAGMA journal_mode = WAL") == "wal")
        try writerConnection.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
        let writer = ConnectionQueue(writerConnection, label: "test-writer")
        let readerConnection = try Connection(path: tmp.path)
        // A reader that waited for the writer's lock would fail at once instead.
        readerConnection.setBusyTimeout(milliseconds: 0)
        let reader = ConnectionQueue(readerConnection, label: "test-reader")
        try writer.sync { db in
            try db.execute("BEGIN IMMEDIATE")
            try db.execute("INSERT INTO t VALUES (2)")
        }
        #expect(try await reader.read { try $0.scalarInt64("SELECT count(*) FROM t") } == 1)
        try writer.sync { try $0.execute("COMMIT") }
        #expect(try await reader.read { try $0.scalarInt64("SELECT count(*) FROM t") } == 2)
        let n = try await writer.write { db -> Int in
            try db.execute("DELETE FROM t")
            return db.changes
        }
        #expect(n == 2)
    }
}
