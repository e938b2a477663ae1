// SPDX-License-Identifier: MIT
import CSQLite

/// A prepared statement: bind, step, read the current row's columns. Used on its
/// connection's thread only, like the connection.
public final class Statement {
    let handle: OpaquePointer
    public let sql: String

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    private var db: OpaquePointer? { sqlite3_db_handle(handle) }

    // MARK: Binding

    /// Resets the statement and binds `values` to its parameters 1, 2, ...
    public func bind(_ values: [any SQLiteBindable]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, v) in values.enumerated() { try bind(v.sqliteValue, at: Int32(i + 1)) }
    }

    /// Binds one parameter (1-based).
    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .integer(let v): try bind(v, at: index)
        case .real(let v): try check(sqlite3_bind_double(handle, index, v))
        case .text(let v): try bind(text: v, at: index)
        case .blob(let v): try check(v.withUnsafeBufferPointer { bindBlob($0, at: index) })
        case .null: try bindNull(at: index)
        }
    }

    /// Binds an integer to one parameter (1-based), without boxing it in a `SQLiteValue`:
    /// the typed binds below let a hot loop bind a row's parameters and `run()` with no
    /// allocation of its own.
    public func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds text (its UTF-8 bytes, with their count) to one parameter.
    public func bind(text value: String, at index: Int32) throws(SQLiteError) {
        var value = value
        try check(value.withUTF8 { utf8 in bindText(utf8, at: index) })
    }

    /// Binds UTF-8 bytes as text to one parameter; SQLite copies them.
    public func bind(text utf8: UnsafeBufferPointer<UInt8>, at index: Int32) throws(SQLiteError) {
        try check(bindText(utf8, at: index))
    }

    /// Binds bytes as a blob to one parameter (empty: an empty blob, not NULL); SQLite
    /// copies them.
    public func bind(blob bytes: UnsafeBufferPointer<UInt8>, at index: Int32) throws(SQLiteError) {
        try check(bindBlob(bytes, at: index))
    }

    public func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// With its byte count, so a NUL inside the text is kept rather than ending it.
    private func bindText(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int32) -> Int32 {
        utf8.withMemoryRebound(to: CChar.self) { chars in
            guard let base = chars.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, csqlite_transient()) }
            return sqlite3_bind_text(handle, index, base, Int32(chars.count), csqlite_transient())
        }
    }

    /// A zero-length blob is an empty blob, not NULL.
    private func bindBlob(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) -> Int32 {
        guard let base = bytes.baseAddress else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), csqlite_transient())
    }

    private func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw SQLiteError(db: db, code: rc, sql: sql) }
    }

    // MARK: Stepping

    /// Advances to the next row: true when there is one, false when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(db: db, code: rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Rewinds the statement so it can run again (bindings stay).
    public func reset() { sqlite3_reset(handle) }

    /// Binds `values` and runs the statement to its end, ignoring any rows.
    public func execute(_ values: [any SQLiteBindable] = []) throws(SQLiteError) {
        try bind(values)
        try run()
    }

    /// Runs the statement with the parameters bound so far to its end, ignoring any rows,
    /// and rewinds it for the next binds.
    public func run() throws(SQLiteError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Binds `values` and calls `row` for each result row.
    public func forEachRow(_ values: [any SQLiteBindable] = [], _ row: (Statement) throws -> Void) throws {
        try bind(values)
        defer { sqlite3_reset(handle) }
        while try step() { try row(self) }
    }

    /// The first column of the first row, when there is a row and it is not NULL.
    public func scalarInt64(_ values: [any SQLiteBindable] = []) throws(SQLiteError) -> Int64? {
        try bind(values)
        defer { sqlite3_reset(handle) }
        guard try step(), !isNull(0) else { return nil }
        return int64(0)
    }

    // MARK: Columns of the current row (0-based)

    public var columnCount: Int32 { sqlite3_column_count(handle) }

    public func columnName(_ i: Int32) -> String { String(cString: sqlite3_column_name(handle, i)) }

    public func isNull(_ i: Int32) -> Bool { sqlite3_column_type(handle, i) == SQLITE_NULL }

    public func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }

    public func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(handle, i)) }

    public func bool(_ i: Int32) -> Bool { sqlite3_column_int64(handle, i) != 0 }

    public func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }

    /// The column as text ("" for NULL).
    public func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(handle, i) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// The column's bytes (empty for NULL).
    public func blob(_ i: Int32) -> [UInt8] {
        guard let p = sqlite3_column_blob(handle, i) else { return [] }
        let n = Int(sqlite3_column_bytes(handle, i))
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    public func optionalInt64(_ i: Int32) -> Int64? { isNull(i) ? nil : int64(i) }

    public func optionalDouble(_ i: Int32) -> Double? { isNull(i) ? nil : double(i) }

    public func optionalText(_ i: Int32) -> String? { isNull(i) ? nil : text(i) }

    public func optionalBlob(_ i: Int32) -> [UInt8]? { isNull(i) ? nil : blob(i) }

    /// The column as it is stored.
    public func value(_ i: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER: .integer(int64(i))
        case SQLITE_FLOAT: .real(double(i))
        case SQLITE_TEXT: .text(text(i))
        case SQLITE_BLOB: .blob(blob(i))
        default: .null
        }
    }
}
