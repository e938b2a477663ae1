// SPDX-License-Identifier: MIT
import Cache
import GRDB
import Foundation
import Testing
import WearMetrics

/// A temporary directory removed at deinit.
final class TempDir: @unchecked Sendable {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("blegate-cache-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var database: String { path + "/cache.sqlite" }
}

let base = UTCTimestamp(millisecondsSince1970: 1_767_238_262_000)   // 2026-01-01T03:31:02Z

/// A heart-rate record like the normalizer makes: `i` seconds after `base`.
func hrRecord(_ device: String, _ i: Int, hr: Double = 70, at: UTCTimestamp? = nil) -> WearMetrics {
    var metrics = KeyValueList<Double>()
    metrics["hr"] = hr + Double(i % 30)
    var meta = KeyValueList<String>()
    meta["sensor_contact"] = "detected"
    meta["rr_count"] = "2"
    return WearMetrics(timestamp: at ?? UTCTimestamp(millisecondsSince1970: base.millisecondsSince1970 + Int64(i) * 1000),
                       deviceID: device, source: "ble_hrm", metrics: metrics, meta: meta, rrIntervals: [812.5, 790.0])
}

/// Collects commit events from the writer thread.
final class CommitLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [CommitEvent] = []

    func add(_ e: CommitEvent) { lock.lock(); storage.append(e); lock.unlock() }
    var events: [CommitEvent] { lock.lock(); defer { lock.unlock() }; return storage }
}

/// A plain SQLite connection to a cache file, as another process (or an older blegate)
/// would open it: for tests that look at or change the file beside the cache.
final class RawConnection: @unchecked Sendable {
    let queue: DatabaseQueue

    init(path: String, readOnly: Bool = false) throws {
        var c = Configuration()
        c.readonly = readOnly
        c.busyMode = .timeout(10)
        // A test may hold a transaction open across calls (BEGIN IMMEDIATE ... COMMIT).
        c.allowsUnsafeTransactions = true
        queue = try DatabaseQueue(path: path, configuration: c)
    }

    func execute(_ sql: String, _ arguments: [(any DatabaseValueConvertible)?] = []) throws {
        try queue.writeWithoutTransaction { db in
            if arguments.isEmpty { try db.execute(sql: sql) } else { try db.execute(sql: sql, arguments: StatementArguments(arguments)) }
        }
    }

    func scalarInt64(_ sql: String, _ arguments: [(any DatabaseValueConvertible)?] = []) throws -> Int64? {
        try queue.writeWithoutTransaction { try Int64.fetchOne($0, sql: sql, arguments: StatementArguments(arguments)) }
    }

    func scalarText(_ sql: String, _ arguments: [(any DatabaseValueConvertible)?] = []) throws -> String? {
        try queue.writeWithoutTransaction { try String.fetchOne($0, sql: sql, arguments: StatementArguments(arguments)) }
    }

    func rows<T>(_ sql: String, _ arguments: [(any DatabaseValueConvertible)?] = [], _ map: (Row) throws -> T) throws -> [T] {
        try queue.writeWithoutTransaction { db in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map(map) }
    }

    /// `body` in one transaction, committed when it returns.
    func transaction(_ body: (Database) throws -> Void) throws {
        try queue.inDatabase { db in
            try db.inTransaction(.immediate) {
                try body(db)
                return .commit
            }
        }
    }
}

/// A record from its JSON text, as the cache's migration reads legacy payloads.
func decodeRecord(_ text: String) throws -> WearMetrics {
    try JSONDecoder().decode(WearMetrics.self, from: Data(text.utf8))
}

/// `a` with `metrics` and `meta` in key order: what reading `a`'s JSON gives (JSON
/// objects carry no order a decoder reports).
func keyOrdered(_ a: WearMetrics) -> WearMetrics {
    var r = a
    for k in a.metrics.keys { r.removeMetric(k) }
    for k in a.metrics.keys.sorted() { r.setMetric(k, a[metric: k]) }
    var meta = KeyValueList<String>()
    for k in a.meta.keys.sorted() { meta[k] = a.meta[k] }
    r.meta = meta
    return r
}
