// SPDX-License-Identifier: MIT
import CSQLite

/// A failed SQLite call: SQLite's extended result code and its message, with the SQL
/// that failed when there was one.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`SQLITE_IOERR_FSYNC`, ...); its low byte is the primary code.
    public var code: Int32
    public var message: String
    public var sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The error of the last call on `db`.
    init(db: OpaquePointer?, code: Int32, sql: String? = nil) {
        let text = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        let extended = db.map { sqlite3_extended_errcode($0) } ?? code
        // sqlite3_extended_errcode reports the latest error on the connection; keep the
        // code we were given when it names another primary error.
        self.init(code: extended & 0xFF == code & 0xFF ? extended : code, message: text, sql: sql)
    }

    /// The primary result code (`SQLITE_FULL`, `SQLITE_BUSY`, ...).
    public var primaryCode: Int32 { code & 0xFF }

    /// The database or the file system is full: SQLITE_FULL, or an I/O error that the
    /// file system reported as ENOSPC, EDQUOT or EFBIG.
    public var isDiskFull: Bool {
        if primaryCode == SQLITE_FULL { return true }
        let m = message.lowercased()
        return m.contains("disk is full") || m.contains("no space")
    }

    public var description: String {
        var s = "SQLite error \(code): \(message)"
        if let sql { s += " - while executing `\(sql)`" }
        return s
    }
}
