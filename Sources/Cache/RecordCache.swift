// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import SystemPackage
import GRDB
import SystemSupport
import Synchronization
import WearMetrics
import Timing

/// The gateway's durable local cache: every record with a stable UUID and an outbox
/// sequence, the device registry, and the outbox the sync engine drains.
///
/// SQLite in WAL mode, `synchronous = FULL`: a record is on the device once its group
/// commit returns, and `blegate cache ...` can read from another process while the gateway
/// writes. `append` never touches SQLite (see `GroupCommitter`); everything else goes
/// through GRDB's pool of one writer connection and one reader connection, each on a
/// serial queue of its own (in WAL mode a read never waits for a commit).
public final class RecordCache: Sendable {
    public let path: String
    public let options: CacheOptions
    /// The writer (group commits, the outbox marks, documents, devices, retention) and the
    /// reader (`configuration(options:new:)`).
    let database: DatabasePool
    let cipher: PayloadCipher?
    /// The device facts `device_info` rows hold, by key, as records are read back (a few
    /// rows per strap: written once, never changed).
    let deviceInfos = Mutex<[Int64: [(key: String, value: String)]]>([:])
    let committer: GroupCommitter
    /// Ids the backend holds that the disk could not yet record as delivered.
    let deliveredUnrecorded = Mutex<Set<String>>([])

    /// Opens (creating when allowed) the cache at `path`, migrating its schema.
    public init(path: String, options: CacheOptions = CacheOptions()) throws(CacheError) {
        self.path = path
        self.options = options
        let exists = access(path, F_OK) == 0
        let parent = FilePath(path).removingLastComponent().string
        if !exists {
            guard options.create else {
                throw CacheError(.noCache, "no cache database at \(path) (the gateway creates it on its first run; check gateway.state_directory and cache.file, or pass --state-dir)")
            }
            if !parent.isEmpty, let failure = FilePaths.makeDirectories(parent, mode: 0o750) {
                throw CacheError(.cannotOpen, "cannot create the directory \(parent): \(failure)")
            }
        }
        var cipher: PayloadCipher?
        if let key = options.encryptionKey { cipher = try PayloadCipher(keyBytes: key) }
        self.cipher = cipher
        if !exists {
            // Health data: owner only, whatever the umask. SQLite gives the -wal and -shm
            // files it creates the database file's mode, so they are 0600 too. (An empty
            // file is an empty database to SQLite.)
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 || errno == EEXIST else {
                throw CacheError(.cannotOpen, "cannot create the cache database \(path): \(String(cString: strerror(errno)))")
            }
            if fd >= 0 {
                fchmod(fd, 0o600)
                // The file's name is on the device before anything is written into it.
                fsync(fd)
                Glibc.close(fd)
                let dir = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                if dir >= 0 {
                    fsync(dir)
                    Glibc.close(dir)
                }
            }
        }

        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: RecordCache.configuration(options: options, new: !exists))
            try pool.writeWithoutTransaction { db in
                // FULL: each commit fsyncs the WAL, so a committed record survives a power
                // cut (NORMAL, GRDB's choice for WAL, syncs only at checkpoints: a power
                // cut could roll back a whole WAL of commits).
                try db.execute(sql: "PRAGMA synchronous = FULL")
                // A checkpoint copies every page the WAL holds into the database once,
                // however often it was rewritten since the last one: the fewer checkpoints,
                // the fewer copies of the hot tail pages. About 4 MiB of WAL between them.
                let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(RecordCache.walBytesPerCheckpoint / max(512, pageSize))")
                // A sealed payload needs the right key before v4 opens it to convert it.
                try RecordCache.checkKey(db, cipher: cipher)
            }
            try CacheSchema.migrator(cipher: cipher).migrate(pool)
        } catch let e as CacheError {
            throw e
        } catch {
            throw CacheError(.cannotOpen, "cannot open the cache database \(path): \(error)")
        }
        RecordCache.restrictCompanions(of: path)

        let state: (next: Int64, members: [String: String], devices: [String: Int64])
        do {
            state = try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    try RecordCache.checkKey(db, cipher: cipher)
                    return .commit
                }
                let maxSeq = try Int64.fetchOne(db, sql: "SELECT max(sequence) FROM record") ?? 0
                let autoSeq = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'record'") ?? 0
                var members: [String: String] = [:]
                var devices: [String: Int64] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT key, address, client_id FROM device") {
                    devices[row["address"]] = row["key"]
                    if let client: String = row["client_id"] { members[row["address"]] = client }
                }
                return (max(maxSeq, autoSeq) + 1, members, devices)
            }
        } catch let e as CacheError {
            throw e
        } catch {
            throw CacheError(.cannotOpen, "cannot read the cache database \(path): \(error)")
        }
        database = pool
        let reserve = path + "-reserve"
        if options.create || access(reserve, F_OK) == 0 { RecordCache.restoreReserve(reserve) }
        committer = GroupCommitter(writer: pool, cipher: cipher, interval: options.groupCommitInterval,
                                   maxRecords: options.groupCommitRecords, maxBuffered: options.maxBufferedRecords,
                                   nextSequence: state.next, members: state.members, devices: state.devices,
                                   makeRoom: { RecordCache.makeRoom(pool, reserve: reserve) },
                                   restoreReserve: { RecordCache.restoreReserve(reserve) })
    }

    /// How every connection of the cache is opened: one writer and one reader connection
    /// (GRDB's pool), each on a serial queue of its own, never on Swift's cooperative pool
    /// (a commit's fsync under `synchronous = FULL` can take tens of milliseconds on an SD
    /// card). One reader: in `blegate run` the sync engine, the status server and retention
    /// read, seldom at once and briefly, while each connection keeps a page cache of its own.
    static func configuration(options: CacheOptions, new: Bool) -> Configuration {
        var c = Configuration()
        c.label = "blegate-cache"
        c.maximumReaderCount = 1
        c.busyMode = .timeout(TimeInterval(options.busyTimeout.milliseconds) / 1000)
        c.prepareDatabase { db in
            // 512 KiB of page cache per connection. Each connection's cache fills as the
            // database grows, so the cache size is memory the gateway gains slowly and
            // keeps: with 8 MiB, `blegate run` rose 7 MiB in its first 4 minutes with 50
            // straps; with SQLite's default 2 MiB it still crept for 30 minutes. The hot
            // pages are few (the newest leaves of the record table and its indexes);
            // others come from the OS's file cache, which the kernel can reclaim.
            try db.execute(sql: "PRAGMA cache_size = -512")
            guard new, !db.configuration.readonly, try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") == 0 else { return }
            // A new database gets small pages. Every commit writes each page it touches
            // whole, and most of what a group commit touches is the tail of a b-tree (the
            // record table, its two indexes, the outbox) that holds a few new rows: with
            // 1 KiB pages that costs a quarter of what it did with SQLite's 4 KiB. Set
            // before WAL is turned on (after which the page size is fixed). Incremental
            // auto-vacuum lets retention hand freed pages back to the file system; it can
            // only be chosen before the first table exists.
            try db.execute(sql: "PRAGMA page_size = \(RecordCache.pageSize)")
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
        }
        return c
    }

    deinit {
        committer.stopWithoutWaiting()
    }

    /// Page size of a new cache (see `init`).
    static let pageSize = 1024

    /// WAL written between two automatic checkpoints.
    static let walBytesPerCheckpoint = 4 << 20

    /// Gives the -wal and -shm files no more access than the database file has. SQLite
    /// does so for the files it creates; these may have been left by an older blegate
    /// that created them before it restricted the database.
    static func restrictCompanions(of path: String) {
        var db = stat()
        guard stat(path, &db) == 0 else { return }
        let allowed = db.st_mode & 0o777
        for companion in [path + "-wal", path + "-shm"] {
            var s = stat()
            guard stat(companion, &s) == 0, s.st_mode & 0o777 & ~allowed != 0 else { continue }
            chmod(companion, s.st_mode & allowed & 0o777)
        }
    }

    /// Refuses a wrong key, or no key for a cache holding sealed records; stores the key's
    /// check value in a cache that has none. Runs before the migrations (on the schema the
    /// file has, maybe none yet) and after them.
    private static func checkKey(_ db: Database, cipher: PayloadCipher?) throws {
        guard try db.tableExists("cache_meta"), try db.tableExists("record") else { return }
        let check = (try Data.fetchOne(db, sql: "SELECT value FROM cache_meta WHERE key = 'key_check'")).map { Array($0) }
        switch (cipher, check) {
        case let (cipher?, check?):
            guard cipher.verify(keyCheck: check) else {
                throw CacheError(.wrongKey, "the encryption key does not open this cache (it was written with another key); use the key it was created with")
            }
        case let (cipher?, nil):
            try db.execute(sql: "INSERT INTO cache_meta (key, value) VALUES ('key_check', ?)", arguments: [Data(try cipher.makeKeyCheck())])
        case (nil, _?):
            let sealed = try db.columns(in: "record").contains { $0.name == "sealed" } ? "sealed IS NOT NULL" : "encrypted = 1"
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM record WHERE \(sealed))") ?? false {
                throw CacheError(.keyRequired, "this cache holds encrypted records: set cache.encryption_key_file to the key it was written with")
            }
        case (nil, nil):
            break
        }
    }

    // MARK: Appending (hot path)

    /// Queues a record for the next group commit and returns its outbox sequence at
    /// once. It is tagged with its device's member now, so a later pairing never
    /// re-attributes what was measured before.
    @discardableResult
    public func append(_ record: WearMetrics) -> Int64 { committer.append(record) }

    /// Queues several records (one lock); returns the sequence of the last one.
    @discardableResult
    public func append(_ records: [WearMetrics]) -> Int64 { committer.append(records) }

    /// Waits until every record appended before this call is committed (SIGTERM, tests).
    /// Throws `CacheError.writeFailed` when a commit fails meanwhile; the records stay
    /// buffered and the writer keeps retrying.
    public func flush() async throws { try await committer.flush() }

    /// Waits until the record with this sequence (from `append`) is committed.
    public func waitUntilCommitted(_ sequence: Int64) async throws { try await committer.waitUntilCommitted(sequence) }

    /// Called on the writer thread after every commit; keep it short. nil removes it.
    public func onCommit(_ handler: (@Sendable (CommitEvent) -> Void)?) { committer.setObserver(handler) }

    /// The watchdog's probe of the writer thread: why it is not keeping up, or nil while
    /// it is (see `GroupCommitter.stall`). Waking nothing, it can be asked as often as
    /// wanted; `within` is the slack the caller allows beyond the writer's own bounds.
    public func writerStall(within: Duration) -> String? {
        committer.stall(within: within, busyTimeout: options.busyTimeout)
    }

    /// Records appended but not yet committed.
    public var bufferedCount: Int { committer.bufferedCount }

    /// Whether commits work; while they fail, what waits in memory and what was dropped
    /// or pruned to make room.
    public var writeHealth: WriteHealth { committer.writeHealth }

    /// Delivered records whose delivery the disk could not record yet (kept in memory).
    public var unrecordedDeliveries: Int { deliveredUnrecorded.withLock { $0.count } }

    /// On a full disk: releases the reserve and deletes the oldest delivered records, so
    /// that the pages they held take new records. Returns how many were deleted.
    static func makeRoom(_ writer: DatabasePool, reserve: String) -> Int {
        // The reserve first: the checkpoint must be able to grow the database file by
        // what the WAL holds, and the delete needs WAL frames, before any page is free.
        // Then delivered records, a chunk at a time, until a reserve's worth of pages is
        // free inside the database (later prunes may find no room to run at all).
        unlink(reserve)
        var deleted = 0
        do {
            try writer.writeWithoutTransaction { db in
                try? db.execute(sql: "PRAGMA wal_checkpoint(PASSIVE)")
                while true {
                    let free = (try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0) * (try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
                    if free >= reserveBytes { break }
                    try db.execute(sql: """
                        DELETE FROM record WHERE sequence IN
                            (SELECT sequence FROM record WHERE \(CacheSchema.isDelivered) ORDER BY sequence LIMIT \(roomChunk))
                        """)
                    let n = db.changesCount
                    deleted += n
                    try? db.execute(sql: "PRAGMA wal_checkpoint(PASSIVE)")
                    if n == 0 { break }
                }
            }
        } catch {
            // What was deleted before the failure stays deleted (each chunk commits).
        }
        return deleted
    }

    /// Space set aside beside the database (`-reserve`, allocated without writing data)
    /// that the cache gives up on a full disk to checkpoint and prune itself.
    static let reserveBytes: Int64 = 8 << 20

    /// Allocates the reserve when it is missing and the disk has room; false otherwise.
    @discardableResult
    static func restoreReserve(_ reserve: String) -> Bool {
        if access(reserve, F_OK) == 0 { return true }
        let fd = open(reserve, O_WRONLY | O_CREAT, 0o600)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        guard posix_fallocate(fd, 0, off_t(reserveBytes)) == 0 else {
            unlink(reserve)
            return false
        }
        return true
    }

    /// Delivered records deleted per attempt to make room (about 800 KiB of pages).
    static let roomChunk = 2000

    /// Commits what is buffered and stops the writer thread. The cache can still be read.
    public func close() async throws { try await committer.stop() }

    /// `PRAGMA integrity_check`: "ok", or SQLite's list of problems.
    public func integrityCheck() async throws -> String {
        try await database.read { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
        }
    }

    // MARK: Reading back

    /// A stored record by id (committed records only).
    public func storedRecord(id: String) async throws -> StoredRecord? {
        try await database.read { db in
            try self.decodeAll(Row.fetchCursor(db, sql: "\(RecordCache.recordSelect) WHERE record.id = ?", arguments: [id]), db).first
        }
    }

    /// Stored records in sequence order after `sequence`, at most `limit`.
    public func storedRecords(after sequence: Int64 = 0, limit: Int = 1000) async throws -> [StoredRecord] {
        try await database.read { db in
            try self.decodeAll(Row.fetchCursor(db, sql: "\(RecordCache.recordSelect) WHERE record.sequence > ? ORDER BY record.sequence LIMIT ?",
                                               arguments: [sequence, limit]), db)
        }
    }

    /// Every read of records: the row, its state (`CacheSchema.stateColumn`) and its device's address.
    static let recordSelect = """
        SELECT record.*, \(CacheSchema.stateColumn) AS record_state, device.address AS device_address
        FROM record LEFT JOIN device ON device.key = record.device
        """

    /// The rows of a `recordSelect` cursor, each read as it is stepped to (a statement's row
    /// finds its columns by name through the statement's index; a copied row searches).
    func decodeAll(_ rows: RowCursor, _ db: Database) throws -> [StoredRecord] {
        var out: [StoredRecord] = []
        while let row = try rows.next() { out.append(try decode(row, db)) }
        return out
    }

    /// A row of `recordSelect` → StoredRecord.
    func decode(_ row: Row, _ db: Database) throws -> StoredRecord {
        let stored = try RecordRow(row: row)
        guard let address: String = row["device_address"] else {
            throw CacheError(.unreadablePayload, "record \(stored.id): its device (\(stored.device)) is missing (corrupted)")
        }
        let record = try stored.record(address: address, deviceInfo: try deviceInfo(stored, db), cipher: cipher)
        return StoredRecord(id: stored.id, sequence: stored.sequence, clientID: stored.clientID,
                            state: RecordState(column: row["record_state"]), reason: stored.reason, record: record)
    }

    /// The device facts `row` carries (none without a `device_info`).
    func deviceInfo(_ row: RecordRow, _ db: Database) throws(CacheError) -> [(key: String, value: String)] {
        guard let key = row.deviceInfo else { return [] }
        if let known = deviceInfos.withLock({ $0[key] }) { return known }
        let bytes: [UInt8]
        do {
            guard let data = try Data.fetchOne(db, sql: "SELECT entries FROM device_info WHERE key = ?", arguments: [key]) else {
                throw CacheError(.unreadablePayload, "record \(row.id): its device information (\(key)) is missing (corrupted)")
            }
            bytes = Array(data)
        } catch let e as CacheError {
            throw e
        } catch {
            throw CacheError(.unreadablePayload, "record \(row.id): \(error)")
        }
        let entries: [(key: String, value: String)]
        do {
            entries = try RecordFields.decodeDeviceInfo(bytes)
        } catch {
            throw CacheError(.unreadablePayload, "record \(row.id): its stored fields cannot be read back (corrupted: \(error.what))")
        }
        deviceInfos.withLock { known in
            // A few rows per strap; a long-lived cache of many straps starts over now and then.
            if known.count > 4096 { known = [:] }
            known[key] = entries
        }
        return entries
    }
}
