// SPDX-License-Identifier: MIT

/// Which class runs now, which ended and still needs its workouts, and each member's
/// open-gym session when no class runs.
///
/// A value type fed with times, never reading a clock, so every rule is tested with
/// made-up times and the gateway persists it whole (a restart resumes the same classes
/// and yields the same workout ids).
public struct ClassBook: Sendable, Equatable, Codable {
    /// A class that ended: its workouts are stored at once and recomputed until
    /// `correctUntilMs`, so records that arrive late correct them.
    public struct Finished: Sendable, Equatable, Codable {
        public var session: ClassSession
        public var correctUntilMs: Int64
        /// Workouts stored for the final window at least once.
        public var stored: Bool
    }

    /// One member's time in the gym outside a class.
    public struct OpenSession: Sendable, Equatable, Codable {
        public var firstMs: Int64
        public var lastMs: Int64
    }

    public private(set) var current: ClassSession?
    public private(set) var finished: [Finished] = []
    public private(set) var openGym: [String: OpenSession] = [:]
    /// Scheduled occurrences that already ran (or were stopped by hand), by key, with their
    /// planned end: they must not start again within their window.
    private var doneScheduled: [String: Int64] = [:]

    public init() {}

    /// How long an ended class's workouts are recomputed for late records.
    public static let correctionWindowMs: Int64 = 10 * 60_000

    // MARK: Staff commands

    /// `blegate class start`.
    public mutating func start(name: String, type: ClassType, at ms: Int64, plannedSeconds: Int? = nil) throws(ClassError) -> ClassSession {
        if let c = current {
            throw ClassError(.alreadyRunning, "a class is already running: \(c.name ?? "unnamed") since \(ZoneCalendar.system().iso8601(millisecondsSince1970: c.startMs)) (stop it first with `blegate class stop`)")
        }
        let trimmed = String(String(name.drop { $0 == " " }.reversed()).drop { $0 == " " }.reversed())
        guard !trimmed.isEmpty, trimmed.count <= 80, !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw ClassError(.badName, "a class name is 1 to 80 printable characters, e.g. --name \"Spin 07:00\"")
        }
        var session = ClassSession(key: "manual/\(ms)", name: trimmed, type: type, origin: .manual, startMs: ms)
        session.plannedSeconds = plannedSeconds
        begin(session)
        return session
    }

    /// `blegate class stop`: ends the running class, scheduled or not.
    public mutating func stop(at ms: Int64) throws(ClassError) -> ClassSession {
        guard let c = current else { throw ClassError(.noneRunning, "no class is running") }
        return end(c, at: ms)
    }

    // MARK: Time and records

    /// A heart rate heard at `ms` (a record's timestamp): extends or opens the member's
    /// open-gym session unless a class covers that time.
    public mutating func heard(device: String, at ms: Int64) {
        if let c = current, ms >= c.startMs { return }
        if finished.contains(where: { $0.session.device == nil && ms >= $0.session.startMs && ms <= ($0.session.endMs ?? .max) }) { return }
        if var s = openGym[device] {
            if ms > s.lastMs { s.lastMs = ms }
            if ms < s.firstMs { s.firstMs = ms }
            openGym[device] = s
        } else {
            openGym[device] = OpenSession(firstMs: ms, lastMs: ms)
        }
    }

    /// Starts and ends scheduled classes and closes idle open-gym sessions. Returns the
    /// sessions that ended now (their workouts are due).
    public mutating func tick(now ms: Int64, schedule: [ScheduledClass], calendar: any LocalCalendar, idleCloseMs: Int64) -> [ClassSession] {
        var ended: [ClassSession] = []
        if let c = current, let planned = c.plannedEndMs, ms >= planned {
            ended.append(end(c, at: planned))
        }
        if current == nil {
            for entry in schedule {
                guard let occ = entry.occurrence(containing: ms, in: calendar) else { continue }
                let key = entry.key(startMs: occ.startMs)
                guard doneScheduled[key] == nil else { continue }
                let session = ClassSession(key: key, name: entry.name, type: entry.type, origin: .scheduled,
                                           startMs: occ.startMs, plannedEndMs: occ.endMs)
                ended += begin(session)
                break
            }
        }
        doneScheduled = doneScheduled.filter { $0.value > ms }
        for (device, s) in openGym where ms - s.lastMs >= idleCloseMs {
            ended.append(closeOpenGym(device, s))
        }
        return ended
    }

    /// The ended classes whose workouts were stored, and those past their correction window
    /// are forgotten.
    public mutating func stored(key: String, now ms: Int64) {
        guard let i = finished.firstIndex(where: { $0.session.key == key }) else { return }
        finished[i].stored = true
        finished.removeAll { $0.stored && $0.correctUntilMs <= ms }
    }

    /// Drops ended classes past their window (after a final recompute).
    public mutating func forgetSettled(now ms: Int64) {
        finished.removeAll { $0.stored && $0.correctUntilMs <= ms }
    }

    // MARK: Internals

    /// Starts `session`, closing every open-gym session first (their workouts end where
    /// the class begins). Returns the closed sessions.
    @discardableResult
    private mutating func begin(_ session: ClassSession) -> [ClassSession] {
        let closed = openGym.map { closeOpenGym($0.key, $0.value) }
        current = session
        return closed
    }

    private mutating func end(_ c: ClassSession, at ms: Int64) -> ClassSession {
        var done = c
        done.endMs = max(ms, c.startMs)
        if c.origin == .scheduled { doneScheduled[c.key] = c.plannedEndMs ?? ms }
        current = nil
        finished.append(Finished(session: done, correctUntilMs: done.endMs! + Self.correctionWindowMs, stored: false))
        return done
    }

    private mutating func closeOpenGym(_ device: String, _ s: OpenSession) -> ClassSession {
        openGym[device] = nil
        let session = ClassSession(key: "open/\(device)/\(s.firstMs)", name: nil, type: .other, origin: .openGym,
                                   startMs: s.firstMs, endMs: s.lastMs, device: device)
        finished.append(Finished(session: session, correctUntilMs: s.lastMs + Self.correctionWindowMs, stored: false))
        return session
    }
}
