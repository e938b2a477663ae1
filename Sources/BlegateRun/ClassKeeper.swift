// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Cache
import Classes
import Logging
import Synchronization
import WearMetrics
import Workouts

/// Runs the gateway's classes: starts and stops them (by hand or by the timetable),
/// follows open gym, and when a class ends turns each member's cached records into a
/// workout in the outbox.
///
/// The class book is saved in the cache on every change, and workouts are computed from
/// the cached records only, so a restart or a power cut during a class changes nothing in
/// what the members get: the same class resumes, with the same workout ids.
final class ClassKeeper: Sendable {
    static let bookKey = "classes.book"

    struct Settings: Sendable {
        var gatewayID: String
        var schedule: [ScheduledClass]
        var calendar: any LocalCalendar = ZoneCalendar.system()
        var idleCloseMs: Int64
        var minDurationMs: Int64
        var openGymType: ClassType
        /// The wall clock, Unix ms (a test's own clock in tests).
        var now: @Sendable () -> Int64 = { UTCTimestamp.now.millisecondsSince1970 }
    }

    let settings: Settings
    let cache: RecordCache
    let workouts: WorkoutAssembler
    let logger: Logger
    let onChange: @Sendable (ClassSession?, [ClassSession]) -> Void
    let onSummary: @Sendable (ClassSession, [(device: String, workout: WorkoutOutput)]) -> Void
    private let book = Mutex(ClassBook())
    private let dirty = Atomic<Bool>(false)
    private let processing = Atomic<Bool>(false)
    /// When each ended class was last computed (ms) and the newest record sequence in its
    /// window then: corrections run once a minute, and only when records arrived late.
    private let computedAt = Mutex<[String: (ms: Int64, sequence: Int64)]>([:])

    /// `onChange` hears the running class and the classes that just ended, `onSummary` a
    /// class's workouts when they are first stored (the wall).
    init(settings: Settings, cache: RecordCache, workouts: WorkoutAssembler, logger: Logger,
         onChange: @escaping @Sendable (ClassSession?, [ClassSession]) -> Void = { _, _ in },
         onSummary: @escaping @Sendable (ClassSession, [(device: String, workout: WorkoutOutput)]) -> Void = { _, _ in }) {
        self.settings = settings
        self.cache = cache
        self.workouts = workouts
        self.logger = logger
        self.onChange = onChange
        self.onSummary = onSummary
    }

    var current: ClassSession? { book.withLock { $0.current } }

    /// A record reached the cache: a heart rate heard outside a class opens or extends
    /// the member's open-gym session.
    func heard(_ record: WearMetrics) { heard(CollectionOfOne(record)) }

    /// Records of one reader round, under one lock.
    ///
    /// The book is saved (`saveIfChanged`) when a session opens or begins earlier, and when
    /// its last record moves into another minute, not on every record: a strap heard every
    /// second would otherwise rewrite the book, and sync the cache's file, every few
    /// seconds for nothing a restart needs. What a crash leaves out of the saved `lastMs`
    /// (at most a minute and the save's period) `restore` takes back from the cached
    /// records.
    func heard<S: Sequence>(_ records: S) where S.Element == WearMetrics {
        let changed = book.withLock { b in
            var changed = false
            for record in records {
                guard WorkoutBuilder.heardHeartRate(record) != nil else { continue }
                let before = b.openGym[record.deviceID]
                b.heard(device: record.deviceID, at: record.timestamp.millisecondsSince1970)
                guard !changed, let after = b.openGym[record.deviceID] else { continue }
                changed = before.map { $0.firstMs != after.firstMs || $0.lastMs / 60_000 != after.lastMs / 60_000 } ?? true
            }
            return changed
        }
        if changed { dirty.store(true, ordering: .relaxed) }
    }

    // MARK: Staff commands

    func start(name: String, type: ClassType, plannedSeconds: Int? = nil) async throws(ClassError) -> ClassSession {
        let now = settings.now()
        let session = try book.withLock { b throws(ClassError) in try b.start(name: name, type: type, at: now, plannedSeconds: plannedSeconds) }
        logger.notice("class started", metadata: ["class": "\(session.name ?? "")", "type": "\(session.type.rawValue)"])
        await save()
        onChange(session, [])
        await processEnded()
        return session
    }

    func stop() async throws(ClassError) -> ClassSession {
        let now = settings.now()
        let session = try book.withLock { b throws(ClassError) in try b.stop(at: now) }
        logger.notice("class stopped", metadata: ["class": "\(session.name ?? "")"])
        await save()
        onChange(nil, [session])
        await processEnded()
        return session
    }

    // MARK: The loop

    /// Seconds until `tick` next has work: a second while a timetable, a running class or
    /// ended classes (their workouts and corrections) are followed; with only open gym,
    /// until the first session falls idle; with nothing open, `idleCloseMs` (a record heard
    /// meanwhile opens a session that falls idle that long after it at the earliest).
    func nextTick() -> Double {
        let now = settings.now()
        return book.withLock { b in
            if !settings.schedule.isEmpty || b.current != nil || !b.finished.isEmpty { return 1 }
            let idle = b.openGym.values.map(\.lastMs).min().map { $0 + settings.idleCloseMs - now } ?? settings.idleCloseMs
            return Double(max(0, min(idle, settings.idleCloseMs))) / 1000
        }
    }

    /// The timetable, idle open-gym sessions, workouts due (see `nextTick`).
    func tick() async {
        let now = settings.now()
        let (ended, current, started) = book.withLock { b in
            let before = b.current?.key
            let ended = b.tick(now: now, schedule: settings.schedule, calendar: settings.calendar, idleCloseMs: settings.idleCloseMs)
            return (ended, b.current, b.current?.key != before && b.current != nil)
        }
        if started, let c = current {
            logger.notice("scheduled class started", metadata: ["class": "\(c.name ?? "")", "type": "\(c.type.rawValue)"])
        }
        if !ended.isEmpty || started {
            await save()
            let classes = ended.filter { $0.origin != .openGym }
            if started || !classes.isEmpty { onChange(current, classes) }
        }
        await processEnded()
    }

    /// Saves the book when open-gym sessions moved (every few seconds, not per record).
    func saveIfChanged() async {
        if dirty.exchange(false, ordering: .relaxed) { await save() }
    }

    /// Computes the workouts of every ended class not stored yet, and recomputes those
    /// within their correction window once a minute (late records change them).
    func processEnded() async {
        // One pass at a time; a command arriving meanwhile is served by the next tick.
        guard !processing.exchange(true, ordering: .acquiring) else { return }
        defer { processing.store(false, ordering: .releasing) }
        let now = settings.now()
        let due = book.withLock { $0.finished }.filter { f in
            guard f.stored else { return true }
            let last = computedAt.withLock { $0[f.session.key]?.ms } ?? 0
            return now - last >= 60_000 || now >= f.correctUntilMs
        }
        guard !due.isEmpty else { return }
        if due.contains(where: { !$0.stored }) {
            // Records received before the class ended may still wait for their commit: the
            // first version takes them all, rather than a correction a minute later.
            do {
                try await cache.flush()
            } catch {
                logger.warning("cannot commit the records before computing workouts", metadata: ["error": "\(error)"])
            }
        }
        for f in due {
            do {
                let sequence = try await cache.lastSequence(from: f.session.startMs, to: f.session.endMs ?? f.session.startMs)
                if f.stored, let last = computedAt.withLock({ $0[f.session.key] }), last.sequence >= sequence {
                    computedAt.withLock { $0[f.session.key] = (now, sequence) }
                    book.withLock { $0.stored(key: f.session.key, now: now) }
                    continue
                }
                let made = try await workouts.store(f.session, minDurationMs: settings.minDurationMs,
                                                    type: f.session.origin == .openGym ? settings.openGymType : f.session.type)
                let stored = made.filter(\.workout.kept)
                if !f.stored, f.session.origin != .openGym || !stored.isEmpty {
                    logger.notice("workouts stored", metadata: ["class": "\(f.session.name ?? "open gym")", "workouts": "\(stored.count)"])
                }
                // The summary has every strap heard in the class, kept as a workout or not.
                if !f.stored, f.session.origin != .openGym { onSummary(f.session, made) }
                computedAt.withLock { $0[f.session.key] = (now, sequence) }
                book.withLock { $0.stored(key: f.session.key, now: now) }
            } catch {
                logger.error("cannot store the workouts of a class", metadata: ["class": "\(f.session.key)", "error": "\(error)"])
                return
            }
        }
        computedAt.withLock { c in
            let live = Set(book.withLock { $0.finished.map(\.session.key) })
            c = c.filter { live.contains($0.key) }
        }
        await save()
    }

    // MARK: Persistence

    /// Loads the saved book; the runtime calls it before any service starts. An open-gym
    /// session's end is saved to the minute (see `heard`): the cache's newest record of
    /// each open session's strap brings it up to date.
    func restore() async {
        if let text = try? await cache.loadMetaText(key: Self.bookKey) {
            do {
                let saved = try JSONDecoder().decode(ClassBook.self, from: Data(text.utf8))
                // Records heard before the load are kept: merge them into the saved book.
                book.withLock { b in
                    let heard = b.openGym
                    b = saved
                    for (device, s) in heard {
                        b.heard(device: device, at: s.firstMs)
                        b.heard(device: device, at: s.lastMs)
                    }
                }
            } catch {
                logger.error("the saved class state is unreadable; starting without a class", metadata: ["error": "\(error)"])
            }
        }
        let open = book.withLock { $0.openGym }
        guard let since = open.values.map(\.lastMs).min() else { return }
        do {
            let cached = try await cache.records(devices: open.keys.sorted(), from: since, to: settings.now())
            book.withLock { b in
                for (device, records) in cached {
                    guard let last = records.last(where: { WorkoutBuilder.heardHeartRate($0.record) != nil }) else { continue }
                    b.heard(device: device, at: last.record.timestamp.millisecondsSince1970)
                }
            }
        } catch {
            logger.warning("cannot read the newest records of open-gym sessions; they may end up to a minute early",
                           metadata: ["error": "\(error)"])
        }
    }

    /// The saved book: property names as keys, sorted, slashes as they are (the text
    /// earlier releases saved, so either reads the other's).
    static var bookEncoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    private func save() async {
        do {
            let text = String(decoding: try book.withLock { try Self.bookEncoder.encode($0) }, as: UTF8.self)
            try await cache.saveMetaText(key: Self.bookKey, text)
        } catch {
            logger.error("cannot save the class state", metadata: ["error": "\(error)"])
        }
    }
}
