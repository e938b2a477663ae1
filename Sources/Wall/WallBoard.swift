// SPDX-License-Identifier: MIT
import ClassSummary
import Effort
import Synchronization
import WearMetrics
import Timing

/// Everything the wall shows, fed by records and turned into one JSON frame per tick.
///
/// `ingest` runs on the notification thread, so it only updates a few numbers under a
/// lock; the frame every screen receives is built once per tick by `frame(now:)`, never
/// per screen or per record.
public final class WallBoard: Sendable {
    /// A heart-rate maximum for members with no age or maximum configured: Tanaka's
    /// estimate at 35, marked as estimated. Every tile needs a zone; a member whose
    /// real maximum is higher raises it within 30 s of holding it.
    public static let fallbackAge = 35

    struct Tile {
        var slot: Int
        var hr: Int
        var heardAt: Double
        var recordMillis: Int64
        var advertised: Bool
        var tally = EffortTally()
        var learner: MaxHeartRateLearner?
        var zone = 0
        var percent = 0
        var estimated = true
        var state: TileState = .live
    }

    struct State {
        var tiles: [String: Tile] = [:]
        var batteries: [String: Double] = [:]
        var directory: [String: WallDirectoryEntry] = [:]
        /// Learned maxima by member key (client id, else address).
        var learned: [String: Int] = [:]
        /// Weights measured by a scale, by client id: newer than the configuration's.
        var weights: [String: Double] = [:]
        /// Members from the backend (blegate-server), by client id, and who wears each strap
        /// there: ahead of the configuration's `[members]`.
        var serverMembers: [String: WallMember] = [:]
        var serverStraps: [String: String] = [:]
        /// Straps heard but waiting for a link, by address.
        var waiting: [String: WallWaitingStrap] = [:]
        var changed = true
        var lastFrameAt = -Double.infinity
        var sequence = 0
        var running: RunningClass?
        /// The summary on screen: its class, how many cards, until when (monotonic seconds).
        /// The rows themselves (every heart rate of the class) are dropped once drawn.
        var summary: (name: String, count: Int, until: Double)?
        /// The last class's summary (kept after the wall stops showing it, for the coach
        /// page), drawn once, and how often one was drawn (the page fetches it by that).
        var lastSummary: (name: String, members: [SummaryView.Member])?
        var summaryHTML: String?
        var summaryNumber = 0
    }

    struct RunningClass {
        var name: String
        var startMillis: Int64
        var plannedSeconds: Int?
    }

    /// How long the summary of a class that ended stays on the screen: long enough for a
    /// class to find their names on the way out.
    public static let summarySeconds = 120.0

    /// Tiles a screen holds (1920×1080 and 1280×720, docs/wall.md); straps waiting for a
    /// link past this are a counter in the header.
    public static let capacity = 48

    let settings: WallSettings
    let clock: @Sendable () -> Double
    let wallMillis: @Sendable () -> Int64
    let onLearned: @Sendable ([String: Int]) -> Void
    private let state = Mutex(State())

    /// `clock` is monotonic seconds; `onLearned` gets every learned maximum whenever one
    /// rises (to be remembered for the next start).
    public init(settings: WallSettings, learned: [String: Int] = [:],
                clock: @escaping @Sendable () -> Double = MonotonicClock.seconds,
                wallMillis: @escaping @Sendable () -> Int64 = { UTCTimestamp.now.millisecondsSince1970 },
                onLearned: @escaping @Sendable ([String: Int]) -> Void = { _ in }) {
        self.settings = settings
        self.clock = clock
        self.wallMillis = wallMillis
        self.onLearned = onLearned
        state.withLock { $0.learned = learned }
    }

    /// Replaces what the device registry says about names and pairings.
    public func updateDirectory(_ entries: [WallDirectoryEntry]) {
        state.withLock { s in
            s.directory = Dictionary(entries.map { ($0.address.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
            s.changed = true
        }
    }

    /// Members and strap owners from the backend; replaces the previous set.
    public func setServerMembers(_ members: [String: WallMember], straps: [String: String]) {
        state.withLock { s in
            s.serverMembers = members
            s.serverStraps = Dictionary(straps.map { ($0.key.uppercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
            s.changed = true
        }
    }

    /// The straps waiting for a link now; replaces the previous set.
    public func updateWaiting(_ straps: [WallWaitingStrap]) {
        state.withLock { s in
            let next = Dictionary(straps.map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
            if next != s.waiting {
                s.waiting = next
                s.changed = true
            }
        }
    }

    /// The latest weight each member's scale measured (kg by client id); kcal use it.
    public func setWeights(_ weights: [String: Double]) {
        state.withLock { $0.weights = weights }
    }

    /// Maxima learned in earlier runs; a higher value already learned in this run stays.
    public func setLearned(_ learned: [String: Int]) {
        state.withLock { s in s.learned.merge(learned) { max($0, $1) } }
    }

    /// A class began: its name and timer go in the header, and every tile's kcal and
    /// points count from now (they are the class's).
    public func classStarted(name: String, startMillis: Int64, plannedSeconds: Int?) {
        state.withLock { s in
            s.running = RunningClass(name: name, startMillis: startMillis, plannedSeconds: plannedSeconds)
            s.summary = nil
            for id in s.tiles.keys { s.tiles[id]!.tally = EffortTally() }
            s.changed = true
        }
    }

    /// A class ended: the header clears, and its summary (from the members' workouts and
    /// the heart rates heard) fills the screen for `summarySeconds`.
    public func classEnded(name: String, rows: [WallSummaryRow], durationSeconds: Double = 0) {
        let now = clock()
        state.withLock { s in
            s.running = nil
            s.summary = rows.isEmpty ? nil : (name, rows.count, now + Self.summarySeconds)
            if !rows.isEmpty {
                let members = rows.sorted { $0.points > $1.points }.map { row in
                    let maxHR = Double(self.maxHR(row.device, s))
                    let resting = self.member(row.device, s).member?.profile.restingHR.map(Double.init)
                    let curve = HeartRateCurve(durationSeconds: max(durationSeconds, row.samples.last?.second ?? 1), maxHR: maxHR, restingHR: resting)
                    return SummaryView.Member(device: row.device, name: summaryName(row.device, s), points: row.points, kcal: row.kcal,
                                              secondsInZone: row.secondsInZone, svg: curve.svg(row.samples), workoutID: row.workoutID)
                }
                s.lastSummary = (name, members)
                s.summaryNumber += 1
                s.summaryHTML = SummaryView.html(title: name + ": well done", members: members)
            }
            s.changed = true
        }
    }

    /// The summary on the screen now, as HTML (`GET /summary`).
    public func summaryHTML() -> String? {
        state.withLock { s in s.summary == nil ? nil : s.summaryHTML }
    }

    /// The last class's summary, shown or not (the coach page).
    public func lastSummary() -> (name: String, members: [SummaryView.Member])? {
        state.withLock { $0.lastSummary }
    }

    /// One more for every class that ended with a summary: pages fetch a summary by it.
    public var summaryNumber: Int { state.withLock { $0.summaryNumber } }

    /// The maximum a member's zones are drawn against: learned, else their profile's, else
    /// the estimate every tile starts from.
    func maxHR(_ deviceID: String, _ s: State) -> Int {
        if let learned = s.tiles[deviceID]?.learner?.maximum { return learned }
        let (key, member) = self.member(deviceID, s)
        return max(Self.startingMax(member?.profile ?? MemberProfile()).bpm, s.learned[key] ?? 0)
    }

    /// The profile's maximum, else Tanaka's estimate at `fallbackAge` (marked estimated).
    static func startingMax(_ profile: MemberProfile) -> MaxHeartRate {
        MaxHeartRate.of(profile) ?? MaxHeartRate(bpm: Int(MaxHeartRate.tanaka(age: fallbackAge).rounded()), estimated: true)
    }

    /// The key learned maxima are kept under, and the member: the backend's, else the
    /// configuration's, if any.
    func member(_ deviceID: String, _ s: State) -> (key: String, member: WallMember?) {
        let clientID = s.directory[deviceID]?.clientID ?? s.serverStraps[deviceID]
        let member = clientID.flatMap { s.serverMembers[$0] ?? settings.members[$0] } ?? settings.members[deviceID]
        return (clientID ?? deviceID, member)
    }

    public func ingest(_ record: WearMetrics, isDeviceRecord: Bool) {
        let id = record.deviceID.uppercased()
        let battery = record.meta["battery"].flatMap(Double.init)
        guard !isDeviceRecord, record.source == "ble_hrm", let value = record.metrics["hr"], value > 0 else {
            if let battery { state.withLock { $0.batteries[id] = battery; $0.changed = true } }
            return
        }
        let hr = Int(value.rounded())
        let now = clock()
        var raised: [String: Int]?
        state.withLock { s in
            if let battery { s.batteries[id] = battery }
            let (key, member) = self.member(id, s)
            var profile = member?.profile ?? MemberProfile()
            if let weight = s.weights[key] { profile.weightKg = weight }
            var tile = s.tiles[id] ?? Tile(slot: Self.freeSlot(s.tiles), hr: hr, heardAt: now, recordMillis: 0, advertised: false)
            tile.hr = hr
            tile.heardAt = now
            tile.recordMillis = record.timestamp.millisecondsSince1970
            tile.advertised = record.meta["hr_source"] == "advertisement"

            let base = Self.startingMax(profile)
            let known = s.learned[key].map { max($0, base.bpm) }
            if tile.learner == nil || tile.learner!.maximum < (known ?? base.bpm) {
                tile.learner = MaxHeartRateLearner(maximum: known ?? base.bpm)
            }
            if let newMax = tile.learner!.observe(hr: hr, at: now) {
                s.learned[key] = newMax
                raised = s.learned
            }
            let maxHR = tile.learner!.maximum
            tile.estimated = base.estimated && maxHR == base.bpm
            let resting = profile.restingHR.map(Double.init)
            let intensity = HeartRateZone.intensity(hr: Double(hr), max: Double(maxHR), resting: resting)
            tile.zone = HeartRateZone.zone(intensity: intensity)
            tile.percent = Int((Double(hr) / Double(maxHR) * 100).rounded(.down))
            var kcalProfile = profile
            kcalProfile.maxHR = maxHR
            tile.tally.add(at: now, zone: tile.zone, kcalPerMinute: EnergyExpenditure.kcalPerMinute(hr: Double(hr), profile: kcalProfile))
            s.tiles[id] = tile
            s.changed = true
        }
        if let raised { onLearned(raised) }
    }

    /// The lowest place no tile holds, so a tile keeps its place for as long as it is shown.
    static func freeSlot(_ tiles: [String: Tile]) -> Int {
        let used = Set(tiles.values.map(\.slot))
        var slot = 0
        while used.contains(slot) { slot += 1 }
        return slot
    }

    /// The frame for this tick, or nil when nothing changed and the last frame is recent
    /// (`keepAlive` seconds): screens learn the gateway is there from a frame at least
    /// that often.
    public func frame(keepAlive: Double = 2) -> String? {
        let now = clock()
        return state.withLock { s -> String? in
            for (id, var tile) in s.tiles {
                guard let st = TileState.of(age: now - tile.heardAt, advertised: tile.advertised) else {
                    s.tiles[id] = nil
                    s.changed = true
                    continue
                }
                if st != tile.state {
                    tile.state = st
                    s.tiles[id] = tile
                    s.changed = true
                }
            }
            if let summary = s.summary, now >= summary.until {
                s.summary = nil
                s.changed = true
            }
            guard s.changed || now - s.lastFrameAt >= keepAlive else { return nil }
            s.changed = false
            s.lastFrameAt = now
            s.sequence += 1
            return render(s)
        }
    }

    /// The name a tile and a summary row show, and whether the strap is nobody's yet
    /// (then it shows as new, with the short id staff pair it by).
    func displayName(_ id: String, _ s: State) -> (name: String, isNew: Bool) {
        let entry = s.directory[id]
        let (_, member) = self.member(id, s)
        let isNew = entry?.clientID == nil && s.serverStraps[id] == nil && member?.name == nil
        return (member?.name ?? (isNew ? "New" : entry?.name ?? "Strap " + ShortID.of(id)), isNew)
    }

    func summaryName(_ id: String, _ s: State) -> String {
        let (name, isNew) = displayName(id, s)
        return isNew ? name + " · " + ShortID.of(id) : name
    }

    func render(_ s: State) -> String {
        let running = s.running.map { c in
            WallFrame.RunningClass(name: c.name, elapsed: max(0, (wallMillis() - c.startMillis) / 1000), length: c.plannedSeconds)
        }
        let summary = s.summary.map { WallFrame.Summary(name: $0.name, number: s.summaryNumber, count: $0.count) }
        var tiles = s.tiles.sorted(by: { $0.value.slot < $1.value.slot }).map { id, t in
            let (name, isNew) = displayName(id, s)
            let low = s.batteries[id].map { $0 <= settings.lowBattery } ?? false
            return WallFrame.Tile(id: id, slot: t.slot, name: name, short: isNew ? ShortID.of(id) : nil, hr: t.hr,
                                  pct: t.percent, zone: t.zone, est: t.estimated, pts: Int(t.tally.points),
                                  kcal: t.tally.kcal.map { Int($0) }, low: low ? true : nil, state: t.state.rawValue,
                                  t: t.recordMillis)
        }
        // Waiting straps take the places after the heard ones, in address order, as far
        // as the screen has room; the rest are a count.
        var slot = (tiles.map(\.slot).max() ?? -1) + 1
        var more = 0
        for (id, w) in s.waiting.sorted(by: { $0.key < $1.key }) where s.tiles[id] == nil {
            guard tiles.count < Self.capacity else {
                more += 1
                continue
            }
            let (name, isNew) = displayName(id, s)
            let low = s.batteries[id].map { $0 <= settings.lowBattery } ?? false
            tiles.append(WallFrame.Tile(id: id, slot: slot, name: name, short: isNew ? ShortID.of(id) : nil, hr: 0, pct: 0, zone: 0,
                                        est: true, pts: 0, kcal: nil, low: low ? true : nil, state: "waiting", t: 0, why: w.reason))
            slot += 1
        }
        let frame = WallFrame(seq: s.sequence, gym: settings.gymName, class: running, summary: summary, tiles: tiles,
                              waiting: s.waiting.keys.filter { s.tiles[$0] == nil }.count, waitingHidden: more > 0 ? more : nil)
        // Every field is a string, a whole number, a Bool or an array of them: nothing to fail.
        return (try? String(decoding: WallFrame.encoder.encode(frame), as: UTF8.self)) ?? "{}"
    }
}
