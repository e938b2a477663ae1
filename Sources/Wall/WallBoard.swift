// SPDX-License-Identifier: MIT
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
        var changed = true
        var lastFrameAt = -Double.infinity
        var sequence = 0
        var running: RunningClass?
        /// The last class's summary, until `until` (monotonic seconds).
        var summary: (name: String, rows: [WallSummaryRow], until: Double)?
    }

    struct RunningClass {
        var name: String
        var startMillis: Int64
        var plannedSeconds: Int?
    }

    /// How long the summary of a class that ended stays on the screen.
    public static let summarySeconds = 60.0

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

    /// A class ended: the header clears, and its summary (from the members' workouts)
    /// fills the screen for `summarySeconds`.
    public func classEnded(name: String, rows: [WallSummaryRow]) {
        let now = clock()
        state.withLock { s in
            s.running = nil
            s.summary = rows.isEmpty ? nil : (name, rows.sorted { $0.points > $1.points }, now + Self.summarySeconds)
            s.changed = true
        }
    }

    /// The key learned maxima are kept under, and the configured member, if any.
    func member(_ deviceID: String, _ s: State) -> (key: String, member: WallMember?) {
        let clientID = s.directory[deviceID]?.clientID
        let member = clientID.flatMap { settings.members[$0] } ?? settings.members[deviceID]
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

            let base = MaxHeartRate.of(profile) ?? MaxHeartRate(bpm: Int(MaxHeartRate.tanaka(age: Self.fallbackAge).rounded()), estimated: true)
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
        let isNew = entry?.clientID == nil && member?.name == nil
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
        let summary = s.summary.map { summary in
            WallFrame.Summary(name: summary.name, rows: summary.rows.map { row in
                WallFrame.SummaryRow(id: row.device, name: summaryName(row.device, s), pts: Int(row.points.rounded()),
                                     min: row.secondsInZone.map { Int((Double($0) / 60).rounded()) })
            })
        }
        let tiles = s.tiles.sorted(by: { $0.value.slot < $1.value.slot }).map { id, t in
            let (name, isNew) = displayName(id, s)
            let low = s.batteries[id].map { $0 <= settings.lowBattery } ?? false
            return WallFrame.Tile(id: id, slot: t.slot, name: name, short: isNew ? ShortID.of(id) : nil, hr: t.hr,
                                  pct: t.percent, zone: t.zone, est: t.estimated, pts: Int(t.tally.points),
                                  kcal: t.tally.kcal.map { Int($0) }, low: low ? true : nil, state: t.state.rawValue,
                                  t: t.recordMillis)
        }
        let frame = WallFrame(seq: s.sequence, gym: settings.gymName, class: running, summary: summary, tiles: tiles)
        // Every field is a string, a whole number, a Bool or an array of them: nothing to fail.
        return (try? String(decoding: WallFrame.encoder.encode(frame), as: UTF8.self)) ?? "{}"
    }
}
