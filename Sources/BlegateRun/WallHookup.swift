// SPDX-License-Identifier: MIT
import Cache
import ClassSummary
import Classes
import Config
import Effort
import StrapLinks
import Logging
import NIOCore
import Sync
import Synchronization
import Wall
import WearMetrics

/// Hands every record to the next sink, then to the wall. The wall only updates a few
/// numbers per record, so the notification thread is not held up.
final class WallRecordSink: RecordSink {
    let next: any RecordSink
    let board: WallBoard

    init(_ next: any RecordSink, board: WallBoard) {
        self.next = next
        self.board = board
    }

    func receive(_ record: WearMetrics, kind: RecordKind) {
        next.receive(record, kind: kind)
        board.ingest(record, isDeviceRecord: kind != .heartRate)
    }

    func receive(_ batch: [SinkRecord]) {
        next.receive(batch)
        for r in batch { board.ingest(r.record, isDeviceRecord: r.kind != .heartRate) }
    }
}

/// The wall's part of `blegate run`: its board, its server, and a task that tells it the
/// registry's names and pairings and remembers learned maxima in the cache.
struct WallHookup {
    static let learnedKey = "wall.learned_max_hr"

    let board: WallBoard
    let service: WallService
    let directory: PeriodicTask

    /// nil when `[display] listen = ""`.
    init?(configuration c: GatewayConfiguration, cache: RecordCache, errors: ErrorLog, group: any EventLoopGroup,
          routes: (any WallRoutes)? = nil, logger: Logger) {
        guard let listen = c.display.listen else { return nil }
        let settings = WallSettings(host: listen.host, port: listen.port, gymName: c.display.room ?? c.display.gymName ?? "Gym",
                                    members: c.members.mapValues(Self.member), lowBattery: c.display.lowBattery)
        let board = WallBoard(settings: settings, onLearned: { learned in
            Task { try? await cache.saveMetaText(key: Self.learnedKey, Self.encode(learned)) }
        })
        var wallLogger = logger
        wallLogger[metadataKey: "component"] = "wall"
        self.board = board
        self.service = WallService(board: board, settings: settings, logger: wallLogger, group: group, routes: routes,
                                   onFailure: { errors.add(.config, $0) })
        let loaded = LoadOnce()
        directory = PeriodicTask("wall-directory", every: .seconds(5), immediately: true, body: {
            if loaded.first(), let text = try? await cache.loadMetaText(key: Self.learnedKey) {
                board.setLearned(Self.decode(text))
            }
            if let weights = try? await cache.latestWeights() { board.setWeights(weights.mapValues(\.value)) }
            guard let devices = try? await cache.devices() else { return }
            board.updateDirectory(devices.map { WallDirectoryEntry(address: $0.address, name: $0.name, clientID: $0.member?.clientID) })
        })
    }

    /// The header follows the running class (or none).
    func classChanged(_ current: ClassSession?) {
        guard let c = current else {
            board.classEnded(name: "", rows: [])
            return
        }
        board.classStarted(name: c.name ?? "Class", startMillis: c.startMs,
                           plannedSeconds: c.plannedSeconds ?? c.plannedEndMs.map { Int(($0 - c.startMs) / 1000) })
    }

    /// A class ended: its summary from the members' workouts, each with its curve.
    func classEnded(_ session: ClassSession, _ workouts: [(device: String, workout: WorkoutOutput)]) {
        let start = session.startMs
        let rows = workouts.map { w in
            WallSummaryRow(device: w.device, points: w.workout.points, kcal: w.workout.kcal, secondsInZone: w.workout.secondsInZone,
                           samples: w.workout.track.map { HeartRateCurve.Sample(second: Double($0.ms - start) / 1000, bpm: Double($0.bpm)) },
                           workoutID: w.workout.kept ? w.workout.id : nil)
        }
        board.classEnded(name: session.name ?? "Class", rows: rows,
                         durationSeconds: Double((session.endMs ?? start) - start) / 1000)
    }

    /// The strap states the wall shows as waiting tiles: heard, no link yet, and no heart
    /// rate from advertisements either.
    static let waitingStates: Set<LinkState> = [.waiting, .waitingForLink, .connecting, .resolving, .backingOff]

    static func member(_ m: GatewayConfiguration.Member) -> WallMember {
        WallMember(name: m.name, profile: MemberProfile(age: m.age, maxHR: m.maxHR, restingHR: m.restingHR, weightKg: m.weightKg,
                                                        sex: m.sex.flatMap { MemberProfile.Sex(rawValue: $0.rawValue) }))
    }

    /// One `key<TAB>bpm` line per member: keys are addresses or client ids, no tabs.
    static func encode(_ learned: [String: Int]) -> String {
        learned.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)\n" }.joined()
    }

    static func decode(_ text: String) -> [String: Int] {
        var out: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            if parts.count == 2, let bpm = Int(parts[1]) { out[String(parts[0])] = bpm }
        }
        return out
    }
}

/// The coach page's routes, set once the runtime's parts exist (the wall's server is made
/// first); without a PIN the page says how to turn it on.
final class DeferredRoutes: WallRoutes {
    private let routes = Mutex<(any WallRoutes)?>(nil)
    let off: Bool

    init(off: Bool) { self.off = off }

    func set(_ r: any WallRoutes) { routes.withLock { $0 = r } }

    func handles(_ path: String) -> Bool { path == "/coach" || path.hasPrefix("/coach/") }

    func respond(_ request: WallRequest) async -> WallResponse {
        guard let r = routes.withLock({ $0 }) else {
            return WallResponse(status: 404, text: off
                ? "The coach page is off: put a PIN in a file (chmod 600) and name it in the configuration as [coach] pin_file.\n"
                : "The coach page is starting.\n")
        }
        return await r.respond(request)
    }
}

private final class LoadOnce: Sendable {
    private let done = Atomic<Bool>(false)
    func first() -> Bool { !done.exchange(true, ordering: .relaxed) }
}
