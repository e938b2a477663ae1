// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import GRDB
import Synchronization
import SystemSupport
import Timing
import WearMetrics

/// The write side of the cache: a buffer that `append` fills under a short lock, and a
/// dedicated thread that drains it in one transaction per `interval` or per `maxRecords`.
///
/// The notification path must never wait for SQLite, so appending only tags and queues;
/// the fsync of each commit is paid once per batch on this thread. If a commit fails
/// (disk full, I/O error) the batch goes back to the front of the buffer and is retried:
/// a record the caller handed over is only ever lost with the process.
final class GroupCommitter: @unchecked Sendable {
    struct Pending {
        var sequence: Int64
        var clientID: String?
        var record: WearMetrics
    }

    private let condition = Condition()
    // Guarded by `condition`.
    private var buffer: [Pending] = []
    /// Records of the commit under way (taken out of `buffer`, not yet on disk).
    private var inFlight = 0
    /// When the earliest of the buffered records arrived (monotonic ns), and its
    /// timestamp (Unix ms): the commit is due `interval` after it.
    private var firstBufferedAt: UInt64 = 0
    private var oldestBufferedTimestamp: Int64 = .max
    private var nextSequence: Int64
    private var committedThrough: Int64
    private var members: [String: String]
    private var flushRequested = false
    private var waiters: [(target: Int64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var observer: (@Sendable (CommitEvent) -> Void)?
    private var lastError: (any Error)?
    private var health = WriteHealth()
    private let maxBuffered: Int
    /// Frees room in the database when the disk is full (deletes delivered records);
    /// returns how many records it deleted. Runs on the writer thread.
    private let makeRoom: (@Sendable () -> Int)?
    /// Sets the disk reserve aside again (false: no room yet). Writer thread only, with
    /// the two fields below.
    private let restoreReserve: (@Sendable () -> Bool)?
    private var reserveMissing = false
    private var reserveTriedAt: UInt64 = 0
    private var stopping = false
    private var finished = false

    /// What the writer thread is doing, for the watchdog, without its lock (a thread stuck
    /// while holding it must not stop the probe): a `Phase` and since when (monotonic ms),
    /// as `since << 2 | phase`.
    private let activity = Atomic<Int64>(0)
    /// Since when (monotonic ms) records have waited for the writer to take them; 0 while
    /// none wait. Written under the lock, read without it.
    private let waitingSince = Atomic<Int64>(0)

    enum Phase: Int64 {
        /// Waiting for records, or for the commit interval to pass.
        case idle = 0
        /// Its own work: serializing a batch, the commit's transaction, telling the
        /// observers and waiters. Bounded: SQLite waits at most the busy timeout for a lock.
        case committing = 1
        /// Waiting for the cache's connection while other cache work holds it (retention,
        /// delivery marks), or deleting delivered records to make room on a full disk: work
        /// of the whole cache, which may take long over a large backlog (a restart would
        /// only begin it again), not held against the writer.
        case cacheWork = 2
    }

    private func enter(_ phase: Phase) {
        activity.store(Int64(MonotonicClock.nanoseconds() / 1_000_000) << 2 | phase.rawValue, ordering: .relaxed)
    }

    private func recordsWaitFromNow() {
        waitingSince.store(Int64(MonotonicClock.nanoseconds() / 1_000_000), ordering: .relaxed)
    }

    /// Why the writer thread is not keeping up, or nil while it is: its own work has taken
    /// longer than `busyTimeout` + `within`, or records have waited longer than the commit
    /// interval, the longest retry pause (2 s) and `within` while it was free to take them.
    /// Costs the writer nothing: it stamps what it does as it goes, and is not woken.
    func stall(within: Duration, busyTimeout: Duration) -> String? {
        let now = Int64(MonotonicClock.nanoseconds() / 1_000_000)
        let state = activity.load(ordering: .relaxed)
        let since = state >> 2
        switch Phase(rawValue: state & 3) ?? .idle {
        case .committing:
            let limit = busyTimeout.milliseconds + within.milliseconds
            return now - since > limit ? "a commit under way for \(Duration.milliseconds(now - since).readable)" : nil
        case .cacheWork:
            return nil
        case .idle:
            let waiting = waitingSince.load(ordering: .relaxed)
            guard waiting != 0 else { return nil }
            let waited = now - max(waiting, since)
            let limit = Int64(intervalNanoseconds / 1_000_000) + 2000 + within.milliseconds
            return waited > limit ? "records waiting \(Duration.milliseconds(waited).readable) for a commit" : nil
        }
    }

    private let writer: DatabasePool
    private let cipher: PayloadCipher?
    private let intervalNanoseconds: UInt64
    private let maxRecords: Int
    /// Used on the writer thread only.
    private var idMaker = RecordID.Maker()
    /// The `last_seen_ms` last written per device (writer thread only).
    private var lastSeenWritten: [String: Int64] = [:]
    /// Each device's `device.key` by address (writer thread only; a device row is never
    /// deleted, so a key stays valid).
    private var deviceKeys: [String: Int64]
    /// Each device's facts as `device_info` rows (writer thread only).
    private var deviceInfos = DeviceInfoWriter()
    /// A device's `last_seen_ms` is rewritten at most this often while records keep
    /// coming (and at close): rewriting it at every commit would rewrite the device
    /// table's pages for a value nobody reads to the second.
    static let lastSeenResolutionMilliseconds: Int64 = 60_000

    init(writer: DatabasePool, cipher: PayloadCipher?, interval: Duration, maxRecords: Int, maxBuffered: Int = .max,
         nextSequence: Int64, members: [String: String], devices: [String: Int64], makeRoom: (@Sendable () -> Int)? = nil,
         restoreReserve: (@Sendable () -> Bool)? = nil) {
        self.deviceKeys = devices
        self.maxBuffered = max(1, maxBuffered)
        self.makeRoom = makeRoom
        self.restoreReserve = restoreReserve
        self.writer = writer
        self.cipher = cipher
        self.intervalNanoseconds = UInt64(max(0, interval.seconds) * 1e9)
        self.maxRecords = max(1, maxRecords)
        self.nextSequence = nextSequence
        self.committedThrough = nextSequence - 1
        self.members = members
        let rc = DetachedThread.start(name: "blegate-cache", stackSize: 512 * 1024) { [self] in run() }
        precondition(rc == 0, "cannot start the cache's writer thread: \(String(cString: strerror(rc)))")
    }

    // MARK: Caller side

    /// Queues records; returns the sequence given to the last one (or the last one
    /// assigned before, for an empty array).
    @discardableResult
    func append<S: Sequence>(_ records: S) -> Int64 where S.Element == WearMetrics {
        condition.lock()
        defer { condition.unlock() }
        let wasEmpty = buffer.isEmpty
        var oldest = Int64.max
        for r in records {
            buffer.append(Pending(sequence: nextSequence, clientID: members[r.deviceID], record: r))
            nextSequence += 1
            oldest = min(oldest, r.timestamp.millisecondsSince1970)
        }
        if oldest != .max { buffered(oldestTimestamp: oldest, wasEmpty: wasEmpty) }
        return nextSequence - 1
    }

    func append(_ record: WearMetrics) -> Int64 {
        condition.lock()
        defer { condition.unlock() }
        let wasEmpty = buffer.isEmpty
        buffer.append(Pending(sequence: nextSequence, clientID: members[record.deviceID], record: record))
        nextSequence += 1
        buffered(oldestTimestamp: record.timestamp.millisecondsSince1970, wasEmpty: wasEmpty)
        return nextSequence - 1
    }

    /// After an append (lock held): the commit is due `interval` after the earliest
    /// arrival among the buffered records, and the writer hears of a new deadline or of a
    /// full batch. The earliest, not the first appended: readers that gather notifications
    /// hand over a round's records in socket order, and a later round may bring a record
    /// older than those buffered; counting from the first appended would let that one wait
    /// up to a window longer than the interval. Comparing timestamps needs no clock read,
    /// so an append that does not move the deadline costs nothing more.
    private func buffered(oldestTimestamp: Int64, wasEmpty: Bool) {
        boundBuffer()
        if wasEmpty || oldestTimestamp < oldestBufferedTimestamp {
            oldestBufferedTimestamp = oldestTimestamp
            let arrived = arrival(timestampMilliseconds: oldestTimestamp)
            if wasEmpty || arrived < firstBufferedAt {
                firstBufferedAt = arrived
                if wasEmpty { recordsWaitFromNow() }
                condition.signal()
                return
            }
        }
        if buffer.count >= maxRecords { condition.signal() }
    }

    /// When a record arrived, on the monotonic clock: the record's timestamp is when its
    /// notification arrived, and a reader that gathers notifications hands it over up to a
    /// few hundred milliseconds later. Counting the interval from the arrival keeps
    /// notification → committed within the interval plus one transaction. The age comes
    /// from the wall clock, so only an age within the interval is believed: an older record
    /// (a backfill, a test's fixed time) or a clock step counts from now, as a record
    /// handed over at once would, and commits are never hurried by a bad clock.
    private func arrival(timestampMilliseconds: Int64) -> UInt64 {
        let now = MonotonicClock.nanoseconds()
        let age = WallClock.milliseconds() - timestampMilliseconds
        guard age > 0, UInt64(age) * 1_000_000 < intervalNanoseconds, UInt64(age) * 1_000_000 <= now else { return now }
        return now - UInt64(age) * 1_000_000
    }

    /// Keeps memory bounded while commits fail: beyond `maxBuffered`, the oldest waiting
    /// records go (a tenth of the bound at once, so the cost is amortised), counted.
    /// Caller holds the lock.
    private func boundBuffer() {
        // While commits fail, the batch of the retry under way counts too: it is held in
        // memory as much as the waiting records are.
        let held = buffer.count + (health.failingSince != nil ? inFlight : 0)
        guard held > maxBuffered else { return }
        let drop = min(buffer.count, held - maxBuffered + maxBuffered / 10)
        buffer.removeFirst(drop)
        health.dropped += drop
    }

    /// Whether commits work, with what waits in memory.
    var writeHealth: WriteHealth {
        condition.lock()
        defer { condition.unlock() }
        var h = health
        h.buffered = buffer.count + inFlight
        h.committing = inFlight
        return h
    }

    /// Records appended from now on for `address` carry `clientID` (nil: unpaired).
    func setMember(_ clientID: String?, for address: String) {
        condition.lock()
        members[address] = clientID
        condition.unlock()
    }

    func setObserver(_ handler: (@Sendable (CommitEvent) -> Void)?) {
        condition.lock()
        observer = handler
        condition.unlock()
    }

    /// Records held in memory and not yet committed: those waiting for the next commit
    /// and those of the commit under way (which a crash now would lose), so that zero
    /// means every record appended so far is on disk.
    var bufferedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return buffer.count + inFlight
    }

    var lastAssignedSequence: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return nextSequence - 1
    }

    var lastCommittedSequence: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return committedThrough
    }

    /// Waits until every record appended before the call is committed. Throws the
    /// commit's error if a commit fails meanwhile (the records stay buffered).
    func flush() async throws {
        try await waitUntilCommitted(lastAssignedSequence, hurry: true)
    }

    /// Waits until the record with `sequence` (and all before it) is committed.
    func waitUntilCommitted(_ sequence: Int64, hurry: Bool = false) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            condition.lock()
            if committedThrough >= sequence {
                condition.unlock()
                c.resume()
                return
            }
            if finished {
                condition.unlock()
                c.resume(throwing: CacheError(.closed, "the cache is closed; \(buffer.count) records were not written"))
                return
            }
            waiters.append((sequence, c))
            if hurry { flushRequested = true }
            condition.signal()
            condition.unlock()
        }
    }

    /// Commits what is buffered, then ends the writer thread.
    func stop() async throws {
        try await flush()
        join()
    }

    /// Blocks until the thread has drained the (already flushed) buffer and ended.
    private func join() {
        condition.lock()
        stopping = true
        condition.signal()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// Lets the thread drain and exit without waiting (the cache was released).
    func stopWithoutWaiting() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    // MARK: Writer thread

    private func run() {
        var generator = BufferedSystemRandom()
        // A failed commit is retried at 50 ms, 100 ms, ... 2 s: soon for a busy lock, gently for a sick disk.
        let retry = Backoff(base: .milliseconds(50), cap: .seconds(2))
        var failures = 0
        while true {
            enter(.idle)
            condition.lock()
            while true {
                if buffer.isEmpty {
                    if stopping { break }
                    condition.wait()
                    continue
                }
                if stopping || flushRequested || buffer.count >= maxRecords { break }
                let now = MonotonicClock.nanoseconds()
                let due = firstBufferedAt &+ intervalNanoseconds
                if now >= due { break }
                condition.wait(untilMonotonicNanoseconds: due)
            }
            if buffer.isEmpty, stopping {
                finished = true
                let left = waiters
                waiters = []
                condition.broadcast()
                condition.unlock()
                for w in left { w.continuation.resume() }
                return
            }
            let batch = buffer
            buffer = []
            inFlight = batch.count
            flushRequested = false
            enter(.committing)
            waitingSince.store(0, ordering: .relaxed)
            let final = stopping
            condition.unlock()

            let started = MonotonicClock.nanoseconds()
            do {
                try write(batch, final: final, using: &generator)
                enter(.committing)
                let committedAt = MonotonicClock.nanoseconds()
                failures = 0
                condition.lock()
                committedThrough = batch[batch.count - 1].sequence
                inFlight = 0
                lastError = nil
                health.failingSince = nil
                health.diskFull = false
                health.lastError = nil
                var ready: [CheckedContinuation<Void, any Error>] = []
                waiters.removeAll { w in
                    guard w.target <= committedThrough else { return false }
                    ready.append(w.continuation)
                    return true
                }
                let notify = observer
                condition.unlock()
                if reserveMissing, committedAt - reserveTriedAt > 60_000_000_000 {
                    reserveTriedAt = committedAt
                    reserveMissing = !(restoreReserve?() ?? true)
                }
                // Observers first: when flush() returns, they have heard of every commit.
                notify?(CommitEvent(sequences: batch[0].sequence...batch[batch.count - 1].sequence,
                                    committedAt: committedAt, transactionNanoseconds: committedAt - started))
                for c in ready { c.resume() }
            } catch {
                let failure = CacheError(.writeFailed, "committing \(batch.count) records failed, they stay buffered and are retried: \(error)")
                let full = GroupCommitter.isDiskFull(error)
                condition.lock()
                buffer = batch + buffer
                inFlight = 0
                boundBuffer()
                if buffer.count == batch.count {
                    firstBufferedAt = MonotonicClock.nanoseconds()
                    oldestBufferedTimestamp = .min
                }
                recordsWaitFromNow()
                lastError = failure
                if health.failingSince == nil { health.failingSince = .now }
                health.diskFull = full
                health.lastError = "\(error)"
                let failed = waiters
                waiters = []
                let giveUp = stopping
                condition.unlock()
                for w in failed { w.continuation.resume(throwing: failure) }
                if giveUp {
                    // close() after a failed flush: keep trying is pointless, report and end.
                    condition.lock()
                    finished = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                if full, let makeRoom {
                    // Room from the cache itself: the reserve, the oldest delivered records.
                    reserveMissing = true
                    enter(.cacheWork)
                    let pruned = makeRoom()
                    enter(.idle)
                    if pruned > 0 {
                        condition.lock()
                        health.prunedForSpace += pruned
                        condition.unlock()
                        continue
                    }
                }
                failures += 1
                enter(.idle)
                usleep(useconds_t(retry.window(afterFailures: failures).nanoseconds / 1000))
            }
        }
    }

    /// SQLITE_FULL, or the file system's ENOSPC/EDQUOT/EFBIG surfacing as an I/O error.
    static func isDiskFull(_ error: any Error) -> Bool {
        guard let e = error as? DatabaseError else { return false }
        if e.resultCode == .SQLITE_FULL { return true }
        let m = (e.message ?? "").lowercased()
        return m.contains("disk is full") || m.contains("no space")
    }

    private func write<G: RandomNumberGenerator>(_ batch: [Pending], final: Bool, using generator: inout G) throws {
        let storedAt = UTCTimestamp.now.millisecondsSince1970
        // The batch's ids end to end: record i's is `ids[36 i ..< 36 (i + 1)]`.
        var ids: [UInt8] = []
        ids.reserveCapacity(RecordID.length * batch.count)
        for _ in batch { idMaker.next(atMilliseconds: storedAt, using: &generator, appendingTo: &ids) }
        // Fields and sealing outside SQLite's write lock: each record's columns, or its
        // sealed fields, ready to bind.
        var rows: [RecordRow] = []
        rows.reserveCapacity(batch.count)
        var deviceStarts: [Int] = []
        deviceStarts.reserveCapacity(batch.count)
        for i in batch.indices {
            let record = batch[i].record
            let id = String(decoding: ids[(i * RecordID.length)..<((i + 1) * RecordID.length)], as: UTF8.self)
            let start = RecordFields.deviceStart(record.meta)
            let source = SourceKind.code(record.source)
            var row = RecordRow(sequence: batch[i].sequence, id: id, timestampMs: record.timestamp.millisecondsSince1970,
                                device: 0, source: source, clientID: batch[i].clientID, storedMs: storedAt, deviceInfo: nil,
                                fields: RecordFields(), sealed: nil)
            if let cipher {
                row.sealed = try cipher.seal(RecordFields.body(record, deviceStart: start),
                                             aad: PayloadCipher.recordAAD(id: id, timestampMs: row.timestampMs, device: record.deviceID, source: source))
            } else {
                row.fields = RecordFields(record, deviceStart: start)
            }
            rows.append(row)
            deviceStarts.append(start)
        }
        var lastSeen: [String: Int64] = [:]
        for p in batch {
            let t = p.record.timestamp.millisecondsSince1970
            if let old = lastSeen[p.record.deviceID], old >= t { continue }
            lastSeen[p.record.deviceID] = t
        }
        if !final {
            lastSeen = lastSeen.filter { address, t in
                guard let written = lastSeenWritten[address] else { return true }
                return t >= written + Self.lastSeenResolutionMilliseconds
            }
        }
        var newDevices: [String: Int64] = [:]
        enter(.cacheWork)
        do {
            try writer.writeWithoutTransaction { db in
                enter(.committing)
                defer { enter(.cacheWork) }
                try db.inTransaction(.immediate) {
                    let insert = try RecordRow.insertStatement(db)
                    let pending = try db.cachedStatement(sql: "INSERT INTO outbox (sequence) VALUES (?)")
                    let unpaired = try db.cachedStatement(sql: "INSERT INTO outbox_unpaired (sequence, device_id) VALUES (?, ?)")
                    let seen = try db.cachedStatement(sql: """
                        INSERT INTO device (address, first_seen_ms, last_seen_ms) VALUES (?, ?, ?)
                        ON CONFLICT(address) DO UPDATE SET last_seen_ms = max(coalesce(last_seen_ms, 0), excluded.last_seen_ms)
                        """)
                    for i in batch.indices {
                        let record = batch[i].record
                        let address = record.deviceID
                        var row = rows[i]
                        if let key = deviceKeys[address] ?? newDevices[address] {
                            row.device = key
                        } else {
                            // A device's first record: its row, with the time it was first seen.
                            let t = record.timestamp.millisecondsSince1970
                            try seen.execute(arguments: [address, t, t])
                            guard let key = try Int64.fetchOne(db, sql: "SELECT key FROM device WHERE address = ?", arguments: [address]) else {
                                throw CacheError(.writeFailed, "device \(address) has no row")
                            }
                            newDevices[address] = key
                            row.device = key
                        }
                        row.deviceInfo = try deviceInfos.key(for: record.meta.entries[deviceStarts[i]...], device: row.device, in: db)
                        try row.insert(with: insert)
                        if batch[i].clientID != nil {
                            try pending.execute(arguments: [row.sequence])
                        } else {
                            try unpaired.execute(arguments: [row.sequence, address])
                        }
                    }
                    for (address, t) in lastSeen { try seen.execute(arguments: [address, t, t]) }
                    return .commit
                }
            }
        } catch {
            deviceInfos.rolledBack()
            throw error
        }
        deviceInfos.committed()
        for (address, key) in newDevices { deviceKeys[address] = key }
        for (address, t) in lastSeen { lastSeenWritten[address] = max(lastSeenWritten[address] ?? t, t) }
    }
}
