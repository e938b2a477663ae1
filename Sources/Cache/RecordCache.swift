// SPDX-License-Identifier: MIT
import Glibc
import SystemPackage
import SystemSupport
import SQLite
import Synchronization
import WearMetrics
import Timing

/// The gateway's durable local cache: every record with a stable UUID and an outbox
/// sequence, the device registry, and the outbox the sync engine drains.
///
/// SQLite in WAL mode, `synchronous = FULL`: a record is on the device once its group
/// commit returns, and `blegate cache ...` can read from another process while the gateway
/// writes. `append` never touches SQLite (see `GroupCommitter`); everything else goes
/// through the one writer connection or the one reader connection, each on a serial
/// queue of its own (in WAL mode a read never waits for a commit).
public final class RecordCache: Sendable {
    public let path: String
    public let options: CacheOptions
    /// The writer connection: group commits, the outbox marks, documents, devices, retention.
    let writer: ConnectionQueue
    /// The reader connection. One: in `blegate run` the sync engine, the status server and
    /// retention read, seldom at once and briefly (export and the cache commands are
    /// processes of their own), while each connection keeps a page cache of its own.
    let reader: ConnectionQueue
    let cipher: PayloadCipher?
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

        let writerConnection: Connection
        let readerConnection: Connection
        do {
            writerConnection = try Connection(path: path)
            try RecordCache.configure(writerConnection, busyTimeout: options.busyTimeout)
            // A new database gets small pages (an existing one keeps its size: this is a
            // no-op once the file has a header). Every commit writes each page it touches
            // whole, and most of what a group commit touches is the tail of a b-tree (the
            // record table, its two indexes, the outbox) that holds a few new rows: with
            // 1 KiB pages that costs a quarter of what it did with SQLite's 4 KiB. Set
            // before WAL is turned on (after which the page size is fixed).
            if !exists { try writerConnection.execute("PRAGMA page_size = \(RecordCache.pageSize)") }
            let mode = try writerConnection.scalarText("PRAGMA journal_mode = WAL")
            guard mode == "wal" else {
                throw CacheError(.cannotOpen, "cannot open the cache database \(path): SQLite kept journal mode \(mode ?? "unknown") instead of WAL")
            }
            // FULL: each commit fsyncs the WAL, so a committed record survives a power
            // cut (NORMAL syncs only at checkpoints: a power cut could roll back a whole
            // WAL of commits).
            try writerConnection.execute("PRAGMA synchronous = FULL")
            // A checkpoint copies every page the WAL holds into the database once,
            // however often it was rewritten since the last one: the fewer checkpoints,
            // the fewer copies of the hot tail pages. About 4 MiB of WAL between them.
            let pageSize = Int(try writerConnection.scalarInt64("PRAGMA page_size") ?? 4096)
            try writerConnection.execute("PRAGMA wal_autocheckpoint = \(RecordCache.walBytesPerCheckpoint / max(512, pageSize))")
            // Incremental auto-vacuum lets retention hand freed pages back to the file
            // system. It can only be switched on before the first table exists, and in
            // WAL mode takes a VACUUM (of an empty file here) to apply.
            if try writerConnection.scalarInt64("SELECT count(*) FROM sqlite_master") == 0 {
                try writerConnection.execute("PRAGMA auto_vacuum = INCREMENTAL")
                try writerConnection.execute("VACUUM")
            }
            try CacheSchema.migrate(writerConnection)
            readerConnection = try Connection(path: path)
            try RecordCache.configure(readerConnection, busyTimeout: options.busyTimeout)
        } catch let e as CacheError {
            throw e
        } catch {
            throw CacheError(.cannotOpen, "cannot open the cache database \(path): \(error)")
        }
        RecordCache.restrictCompanions(of: path)

        let state: (next: Int64, members: [String: String])
        do {
            state = try writerConnection.transaction {
                try RecordCache.checkKey(writerConnection, cipher: cipher)
                let maxSeq = try writerConnection.scalarInt64("SELECT max(sequence) FROM record") ?? 0
                let autoSeq = try writerConnection.scalarInt64("SELECT seq FROM sqlite_sequence WHERE name = 'record'") ?? 0
                var members: [String: String] = [:]
                try writerConnection.forEachRow("SELECT address, client_id FROM device WHERE client_id IS NOT NULL") { row in
                    members[row.text(0)] = row.text(1)
                }
                return (max(maxSeq, autoSeq) + 1, members)
            }
        } catch let e as CacheError {
            throw e
        } catch {
            throw CacheError(.cannotOpen, "cannot read the cache database \(path): \(error)")
        }
        let writer = ConnectionQueue(writerConnection, label: "blegate-cache-writer")
        self.writer = writer
        reader = ConnectionQueue(readerConnection, label: "blegate-cache-reader")
        let reserve = path + "-reserve"
        if options.create || access(reserve, F_OK) == 0 { RecordCache.restoreReserve(reserve) }
        committer = GroupCommitter(writer: writer, cipher: cipher, interval: options.groupCommitInterval,
                                   maxRecords: options.groupCommitRecords, maxBuffered: options.maxBufferedRecords,
                                   nextSequence: state.next, members: state.members,
                                   makeRoom: { RecordCache.makeRoom(writer, reserve: reserve) },
                                   restoreReserve: { RecordCache.restoreReserve(reserve) })
    }

    /// What every connection of the cache sets first.
    private static func configure(_ db: Connection, busyTimeout: Duration) throws(SQLiteError) {
        db.setBusyTimeout(milliseconds: Int(clamping: busyTimeout.milliseconds))
        // 512 KiB of page cache per connection. Each connection's cache fills as the
        // database grows, so the cache size is memory the gateway gains slowly and
        // keeps: with 8 MiB, `blegate run` rose 7 MiB in its first 4 minutes with 50
        // straps; with SQLite's default 2 MiB it still crept for 30 minutes. The hot
        // pages are few (the newest leaves of the record table and its indexes);
        // others come from the OS's file cache, which the kernel can reclaim.
        try db.execute("PRAGMA cache_size = -512")
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

    private static func checkKey(_ db: Connection, cipher: PayloadCipher?) throws {
        let check = try db.scalarBlob("SELECT value FROM cache_meta WHERE key = 'key_check'")
        switch (cipher, check) {
        case let (cipher?, check?):
            guard cipher.verify(keyCheck: check) else {
                throw CacheError(.wrongKey, "the encryption key does not open this cache (it was written with another key); use the key it was created with")
            }
        case let (cipher?, nil):
            try db.execute("INSERT INTO cache_meta (key, value) VALUES ('key_check', ?)", [try cipher.makeKeyCheck()])
        case (nil, _?):
            if try db.scalarInt64("SELECT count(*) FROM record WHERE encrypted = 1") ?? 0 > 0 {
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
    static func makeRoom(_ writer: ConnectionQueue, reserve: String) -> Int {
        // The reserve first: the checkpoint must be able to grow the database file by
        // what the WAL holds, and the delete needs WAL frames, before any page is free.
        // Then delivered records, a chunk at a time, until a reserve's worth of pages is
        // free inside the database (later prunes may find no room to run at all).
        unlink(reserve)
        var deleted = 0
        do {
            try writer.sync { db in
                try? db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                while true {
                    let free = (try db.scalarInt64("PRAGMA freelist_count") ?? 0) * (try db.scalarInt64("PRAGMA page_size") ?? 4096)
                    if free >= reserveBytes { break }
                    try db.execute("""
                        DELETE FROM record WHERE sequence IN
                            (SELECT sequence FROM record WHERE \(CacheSchema.isDelivered) ORDER BY sequence LIMIT \(roomChunk))
                        """)
                    let n = db.changes
                    deleted += n
                    try? db.execute("PRAGMA wal_checkpoint(PASSIVE)")
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
        try await reader.read { db in
            try db.rows("PRAGMA integrity_check") { $0.text(0) }.joined(separator: "; ")
        }
    }

    // MARK: Reading back

    /// A stored record by id (committed records only).
    public func storedRecord(id: String) async throws -> StoredRecord? {
        let cipher = self.cipher
        return try await reader.read { db in
            try db.rows("SELECT \(RecordCache.recordColumns) FROM record WHERE id = ?", [id]) {
                try RecordCache.decode($0, cipher: cipher)
            }.first
        }
    }

    /// Stored records in sequence order after `sequence`, at most `limit`.
    public func storedRecords(after sequence: Int64 = 0, limit: Int = 1000) async throws -> [StoredRecord] {
        let cipher = self.cipher
        return try await reader.read { db in
            try db.rows("SELECT \(RecordCache.recordColumns) FROM record WHERE sequence > ? ORDER BY sequence LIMIT ?",
                        [sequence, limit]) { try RecordCache.decode($0, cipher: cipher) }
        }
    }

    static let recordColumns = "record.sequence, record.id, record.client_id, \(CacheSchema.stateColumn), record.reason, record.encrypted, record.payload"

    /// Row (in `recordColumns` order) → StoredRecord.
    static func decode(_ row: Statement, cipher: PayloadCipher?) throws(CacheError) -> StoredRecord {
        let id = row.text(1)
        let json = try payloadText(id: id, encrypted: row.bool(5), payload: row.blob(6), cipher: cipher)
        let record: WearMetrics
        do {
            record = try WearMetrics(jsonString: json)
        } catch {
            throw CacheError(.unreadablePayload, "record \(id): \(error)")
        }
        return StoredRecord(id: id, sequence: row.int64(0), clientID: row.optionalText(2), state: RecordState(column: row.int(3)),
                            reason: row.optionalText(4), record: record)
    }

    /// The record's JSON text from its stored payload (sealed or not, compact or plain).
    static func payloadText(id: String, encrypted: Bool, payload: [UInt8], cipher: PayloadCipher?) throws(CacheError) -> String {
        var bytes = payload
        if encrypted {
            guard let cipher else { throw CacheError(.keyRequired, "record \(id) is encrypted and no key was given") }
            bytes = try cipher.open(payload, id: id)
        }
        guard let text = CompactRecordText.expand(bytes) else {
            throw CacheError(.unreadablePayload, "record \(id): the stored text holds a byte the cache never writes (corrupted)")
        }
        return String(decoding: text, as: UTF8.self)
    }
}
