// SPDX-License-Identifier: MIT
import CSQLite

/// One SQLite connection. Not thread-safe by design: it is opened without SQLite's own
/// mutexes and used from one thread at a time (a `ConnectionQueue` or one dedicated thread).
public final class Connection {
    let handle: OpaquePointer
    public let path: String
    /// The statements of `cachedStatement`, by SQL text: prepared once, reused for every
    /// commit or read that runs them.
    private var statementCache: [String: Statement] = [:]

    /// Opens the database at `path`: read-write, creating it when absent, or read-only.
    public init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError(db: db, code: rc)
            sqlite3_close_v2(db)
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
        self.path = path
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Waits up to this long for another connection's lock before a call fails with SQLITE_BUSY.
    public func setBusyTimeout(milliseconds: Int) {
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    /// Runs one or more statements separated by semicolons, without parameters.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        guard rc == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle) & 0xFF == rc & 0xFF ? sqlite3_extended_errcode(handle) : rc,
                              message: text, sql: sql)
        }
    }

    /// Runs one statement with parameters.
    public func execute(_ sql: String, _ values: [any SQLiteBindable]) throws(SQLiteError) {
        try prepare(sql).execute(values)
    }

    /// A new prepared statement (one statement; trailing text is an error).
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        var stmt: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let rc = sql.withCString { sqlite3_prepare_v2(handle, $0, -1, &stmt, &tail) }
        guard rc == SQLITE_OK, let stmt else {
            throw SQLiteError(db: handle, code: rc == SQLITE_OK ? SQLITE_MISUSE : rc, sql: sql)
        }
        return Statement(handle: stmt, sql: sql)
    }

    /// The statement for `sql`, prepared on first use and kept for the connection's life.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        if let s = statementCache[sql] {
            s.reset()
            return s
        }
        let s = try prepare(sql)
        statementCache[sql] = s
        return s
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open.
    public var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Queries

    /// Calls `row` for each row of `sql`.
    public func forEachRow(_ sql: String, _ values: [any SQLiteBindable] = [], _ row: (Statement) throws -> Void) throws {
        try prepare(sql).forEachRow(values, row)
    }

    /// Maps each row of `sql`.
    public func rows<T>(_ sql: String, _ values: [any SQLiteBindable] = [], _ map: (Statement) throws -> T) throws -> [T] {
        var out: [T] = []
        try forEachRow(sql, values) { out.append(try map($0)) }
        return out
    }

    /// The first column of the first row as an integer (nil: no row, or NULL).
    public func scalarInt64(_ sql: String, _ values: [any SQLiteBindable] = []) throws(SQLiteError) -> Int64? {
        try prepare(sql).scalarInt64(values)
    }

    /// The first column of the first row as text (nil: no row, or NULL).
    public func scalarText(_ sql: String, _ values: [any SQLiteBindable] = []) throws -> String? {
        let s = try prepare(sql)
        try s.bind(values)
        guard try s.step(), !s.isNull(0) else { return nil }
        return s.text(0)
    }

    /// The first column of the first row as bytes (nil: no row, or NULL).
    public func scalarBlob(_ sql: String, _ values: [any SQLiteBindable] = []) throws -> [UInt8]? {
        let s = try prepare(sql)
        try s.bind(values)
        guard try s.step(), !s.isNull(0) else { return nil }
        return s.blob(0)
    }

    // MARK: Transactions

    public enum TransactionKind: String, Sendable {
        /// Takes the write lock at the first write (readers).
        case deferred = "DEFERRED"
        /// Takes the write lock at BEGIN, so a busy lock fails (or waits) before any work.
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        let result: T
        do {
            result = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            // A failed COMMIT (SQLITE_FULL, an I/O error) may leave the transaction open.
            rollback()
            throw error
        }
        return result
    }

    /// Rolls back the open transaction, if any (SQLite may have rolled it back itself).
    public func rollback() {
        if inTransaction { try? execute("ROLLBACK") }
    }
}
