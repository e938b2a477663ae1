// SPDX-License-Identifier: MIT
import Cache
import Classes
import Config
import Effort
import Sync
import WearMetrics
import Workouts

/// Everything one member's workout is computed from.
struct WorkoutInput: Sendable {
    var id: String
    var gatewayID: String
    var session: ClassSession
    var type: ClassType
    var device: String
    var deviceName: String?
    var clientID: String?
    var records: [WearMetrics]
    /// The records of the member's machines in the window (their distance counts).
    var machines: [WearMetrics] = []
    var profile: MemberProfile?
    var defaultMaxHR: Int
}

/// One computed workout: its JSON for the backend and what the wall's summary shows.
struct WorkoutOutput: Sendable {
    var json: String
    var durationSeconds: Int
    var points: Double
    var secondsInZone: [Int]
    var kcal: Double? = nil
    var id: String = ""
    /// The heart-rate track (Unix ms, bpm), for the summary's curve.
    var track: [(ms: Int64, bpm: Int)] = []
    /// Stored in the outbox; false for one shorter than `workouts.min_duration`, computed
    /// only for the class's summary.
    var kept = true
}

/// Where workouts wait for the backend.
protocol WorkoutOutbox: Sendable {
    /// Stores the workout, or its new version when it changed (a correction).
    func putWorkout(id: String, json: String) async throws
}

/// Turns an ended class into one workout per member heard, read back from the cache.
struct WorkoutAssembler: Sendable {
    /// The namespace of workout ids (version-5 UUIDs of gateway, class and strap). Fixed
    /// forever: changing it would make every recomputed workout look new to the backend.
    static let idNamespace = "b1e6a7e0-5d2c-4f0b-8c3e-7a9d41f2c6b8"

    let gatewayID: String
    let cache: RecordCache
    let outbox: any WorkoutOutbox
    /// Member profiles from the configuration, by strap address or client id.
    let members: [String: MemberProfile]
    /// `members."<id>".machines` from the configuration, by strap address or client id:
    /// machines whose distance counts in that member's workouts.
    var machines: [String: [String]] = [:]
    let defaultMaxHR: Int
    /// Maxima learned on the wall (by address or client id), higher than the profile's.
    let learnedMaxHR: @Sendable () async -> [String: Int]
    /// Profiles from the backend (blegate-server) by client id, ahead of `members`.
    var serverProfiles: @Sendable () -> [String: MemberProfile] = { [:] }
    /// One member's records → the workout JSON and its duration; nil when no heart rate.
    let make: @Sendable (WorkoutInput) -> WorkoutOutput?

    /// A member's profile from the configuration (by client id, else strap address), with
    /// a higher maximum the wall learned.
    static func profile(device: String, clientID: String?, members: [String: MemberProfile], learned: [String: Int]) -> MemberProfile? {
        var profile = clientID.flatMap { members[$0] } ?? members[device]
        if let learnedMax = clientID.flatMap({ learned[$0] }) ?? learned[device], learnedMax > (profile?.maxHR ?? 0) {
            profile = profile ?? MemberProfile()
            profile?.maxHR = learnedMax
        }
        return profile
    }

    /// Members whose records are read from the cache together.
    static let devicesPerRead = 8

    /// The stable id of a member's workout in a class.
    func workoutID(session: ClassSession, device: String) -> String {
        NameBasedUUID.v5(namespace: Self.idNamespace, name: "\(gatewayID)/\(session.key)/\(device)")!
    }

    /// The other devices of `device`'s member among `candidates`: the same client id (both
    /// paired to the member), or listed in the configuration as the member's machines.
    static func sameMember(_ device: String, among candidates: [String], clientID: (String) -> String?,
                           machines: [String: [String]]) -> [String] {
        func listed(_ d: String) -> [String] { (clientID(d).flatMap { machines[$0] } ?? []) + (machines[d] ?? []) }
        let mine = clientID(device), myMachines = listed(device)
        return candidates.filter { other in
            guard other != device else { return false }
            if let mine, clientID(other) == mine { return true }
            return myMachines.contains(other) || listed(other).contains(device)
        }
    }

    /// A strap's records: a heart rate heard from a Heart Rate Measurement or a strap's
    /// advertisement (`ble_hrm`), as opposed to a machine's.
    static func isStrap(_ records: [StoredRecord]) -> Bool {
        records.contains { $0.record.source == "ble_hrm" && WorkoutBuilder.heardHeartRate($0.record) != nil }
    }

    /// Computes and stores the workouts of `session`; returns them by device, with those
    /// too short to keep (`kept` false, not stored) for the class's summary.
    ///
    /// Each strap heard gets a workout, with the distance of the member's machines (see
    /// `sameMember`) added; a machine of a member whose strap was heard gets none of its
    /// own (its heart rate, from hand grips, would make a second workout for the member).
    func store(_ session: ClassSession, minDurationMs: Int64, type: ClassType) async throws -> [(device: String, workout: WorkoutOutput)] {
        guard let end = session.endMs else { return [] }
        let heard = try await cache.devices(heardFrom: session.startMs, to: end)
        let devices: [String]
        if let one = session.device { devices = [one] } else { devices = heard }
        guard !devices.isEmpty else { return [] }
        let registry = Dictionary(try await cache.devices().map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        let clientID: (String) -> String? = { registry[$0]?.member?.clientID }
        let companions = Dictionary(devices.map { d in
            (d, Self.sameMember(d, among: heard, clientID: clientID, machines: machines))
        }, uniquingKeysWith: { a, _ in a })
        let learned = await learnedMaxHR()
        let profiles = members.merging(serverProfiles()) { _, server in server }
        let weights = (try? await cache.latestWeights()) ?? [:]
        var stored: [(device: String, workout: WorkoutOutput)] = []
        // A few members at a time (with their machines): a class of 40 holds one member
        // group's records in memory, not everyone's.
        var group: [String: [StoredRecord]] = [:]
        for (i, device) in devices.enumerated() {
            if i % Self.devicesPerRead == 0 {
                let members = Array(devices[i..<min(i + Self.devicesPerRead, devices.count)])
                var read = members
                for m in members { read += (companions[m] ?? []).filter { !read.contains($0) } }
                group = try await cache.records(devices: read, from: session.startMs, to: end)
            }
            let own = group[device] ?? []
            let others = companions[device] ?? []
            let strap = Self.isStrap(own)
            if !strap, others.contains(where: { Self.isStrap(group[$0] ?? []) }) { continue }
            let machineRecords = strap ? others.filter { !Self.isStrap(group[$0] ?? []) }.flatMap { (group[$0] ?? []).map(\.record) } : []
            let entry = registry[device]
            let client = clientID(device)
            var profile = Self.profile(device: device, clientID: client, members: profiles, learned: learned)
            if let weight = client.flatMap({ weights[$0] }) {
                profile = profile ?? MemberProfile()
                profile?.weightKg = weight.value
            }
            let input = WorkoutInput(id: workoutID(session: session, device: device), gatewayID: gatewayID, session: session, type: type,
                                     device: device, deviceName: entry?.name ?? entry?.model, clientID: client, records: own.map(\.record),
                                     machines: machineRecords, profile: profile, defaultMaxHR: defaultMaxHR)
            guard var workout = make(input) else { continue }
            if Int64(workout.durationSeconds) * 1000 >= minDurationMs {
                try await outbox.putWorkout(id: input.id, json: workout.json)
            } else {
                workout.kept = false
            }
            stored.append((device, workout))
        }
        return stored
    }
}

extension RecordCache: WorkoutOutbox {
    func putWorkout(id: String, json: String) async throws {
        try await putDocument(kind: .workout, id: id, json: json)
    }
}

extension WorkoutAssembler {
    /// The assembler of `blegate run`: profiles from `[members]`, maxima the wall learned.
    init(configuration c: GatewayConfiguration, cache: RecordCache,
         serverProfiles: @escaping @Sendable () -> [String: MemberProfile] = { [:] }) {
        self.init(gatewayID: c.gateway.id, cache: cache, outbox: cache,
                  members: c.members.mapValues { WallHookup.member($0).profile },
                  machines: c.members.compactMapValues { $0.machines.isEmpty ? nil : $0.machines }, defaultMaxHR: c.effort.defaultMaxHR,
                  learnedMaxHR: {
                      guard let text = try? await cache.loadMetaText(key: WallHookup.learnedKey) else { return [:] }
                      return WallHookup.decode(text)
                  },
                  serverProfiles: serverProfiles,
                  make: WorkoutAssembler.compute)
    }

    /// One member's workout, by the Workouts module (the same zones, kcal and points as
    /// the wall's).
    static func compute(_ input: WorkoutInput) -> WorkoutOutput? {
        guard let end = input.session.endMs else { return nil }
        let request = WorkoutRequest(
            id: input.id, clientID: input.clientID, gatewayID: input.gatewayID, deviceID: input.device,
            workoutType: input.type,
            className: input.session.origin == .openGym ? nil : input.session.name, sourceDevice: input.deviceName ?? input.device,
            // The window's end is inclusive here (an open-gym session ends on its last record).
            windowStart: UTCTimestamp(millisecondsSince1970: input.session.startMs), windowEnd: UTCTimestamp(millisecondsSince1970: end + 1),
            profile: input.profile, defaultMaxHR: input.defaultMaxHR)
        guard let workout = WorkoutBuilder.build(request, records: input.records, machines: input.machines) else { return nil }
        return WorkoutOutput(json: workout.jsonString, durationSeconds: workout.durationSeconds,
                             points: workout.effortPoints, secondsInZone: workout.secondsInZone, kcal: workout.caloriesActive,
                             id: workout.id, track: workout.samples.map { ($0.time.millisecondsSince1970, $0.heartRate) })
    }
}

/// The member facts a workout was computed with, for commands that read one back.
public enum WorkoutProfiles {
    /// The zones' maximum and resting heart rate for a member's workout, as the gateway
    /// computes them (configuration, learned maximum, `[effort] default_max_hr`).
    public static func zoneBounds(configuration c: GatewayConfiguration, cache: RecordCache, device: String,
                                  clientID: String?) async -> (maxHR: Int, restingHR: Int?) {
        var learned: [String: Int] = [:]
        if let text = try? await cache.loadMetaText(key: WallHookup.learnedKey) {
            learned = WallHookup.decode(text)
        }
        let profile = WorkoutAssembler.profile(device: device, clientID: clientID,
                                               members: c.members.mapValues { WallHookup.member($0).profile }, learned: learned)
        return WorkoutBuilder.zoneBounds(profile: profile, defaultMaxHR: c.effort.defaultMaxHR)
    }

    /// The records of a strap's machines from `fromMs` to `toMs` (the devices whose
    /// distance the gateway adds to its workouts), for the distance track of an export.
    public static func machineRecords(configuration c: GatewayConfiguration, cache: RecordCache, device: String,
                                      from fromMs: Int64, to toMs: Int64) async throws -> [WearMetrics] {
        let heard = try await cache.devices(heardFrom: fromMs, to: toMs)
        let registry = Dictionary(try await cache.devices().map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        let others = WorkoutAssembler.sameMember(device, among: heard, clientID: { registry[$0]?.member?.clientID },
                                                 machines: c.members.compactMapValues { $0.machines.isEmpty ? nil : $0.machines })
        guard !others.isEmpty else { return [] }
        let records = try await cache.records(devices: others, from: fromMs, to: toMs)
        return others.filter { !WorkoutAssembler.isStrap(records[$0] ?? []) }.flatMap { (records[$0] ?? []).map(\.record) }
    }
}
