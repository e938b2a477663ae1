// SPDX-License-Identifier: MIT
import Cache
import Classes
import Effort
import Foundation
import Sync
import WearMetrics

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
    var profile: MemberProfile?
    var defaultMaxHR: Int
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
    let defaultMaxHR: Int
    /// Maxima learned on the wall (by address or client id), higher than the profile's.
    let learnedMaxHR: @Sendable () async -> [String: Int]
    /// One member's records → the workout JSON and its duration; nil when no heart rate.
    let make: @Sendable (WorkoutInput) -> (json: String, durationSeconds: Int)?

    /// The stable id of a member's workout in a class.
    func workoutID(session: ClassSession, device: String) -> String {
        NameBasedUUID.v5(namespace: Self.idNamespace, name: "\(gatewayID)/\(session.key)/\(device)")!
    }

    /// Computes and stores the workouts of `session`; returns how many were stored.
    func store(_ session: ClassSession, minDurationMs: Int64, type: ClassType) async throws -> Int {
        guard let end = session.endMs else { return 0 }
        let devices: [String]
        if let one = session.device { devices = [one] } else { devices = try await cache.devices(heardFrom: session.startMs, to: end) }
        guard !devices.isEmpty else { return 0 }
        let registry = Dictionary(try await cache.devices().map { ($0.address, $0) }, uniquingKeysWith: { a, _ in a })
        let learned = await learnedMaxHR()
        var stored = 0
        for device in devices {
            let records = try await cache.records(device: device, from: session.startMs, to: end).map(\.record)
            let entry = registry[device]
            let clientID = entry?.member?.clientID
            var profile = clientID.flatMap { members[$0] } ?? members[device]
            if let learnedMax = clientID.flatMap({ learned[$0] }) ?? learned[device], learnedMax > (profile?.maxHR ?? 0) {
                profile = profile ?? MemberProfile()
                profile?.maxHR = learnedMax
            }
            let input = WorkoutInput(id: workoutID(session: session, device: device), gatewayID: gatewayID, session: session, type: type,
                                     device: device, deviceName: entry?.name ?? entry?.model, clientID: clientID, records: records,
                                     profile: profile, defaultMaxHR: defaultMaxHR)
            guard let workout = make(input), Int64(workout.durationSeconds) * 1000 >= minDurationMs else { continue }
            try await outbox.putWorkout(id: input.id, json: workout.json)
            stored += 1
        }
        return stored
    }
}
