// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Cache
import Config
import Effort
import Logging
import Synchronization
import Sync
import Wall
import WearMetrics

/// The gym's members as the gateway shows them: blegate-server's list when the backend is
/// blegate-server (fetched with no configuration, kept in the cache for a start without
/// the network, refreshed every `refresh`), else the configuration's `[members]`.
///
/// The wall's names and zones, the workouts' profiles and the coach page's member list
/// all read it, so every room shows the same names and zones.
final class MemberDirectory: Sendable {
    static let cacheKey = "members.server"
    static let refresh = Duration.seconds(60)

    struct Snapshot: Sendable, Codable {
        /// nil: the backend keeps no members (or none was reached yet).
        var members: [BackendMember]?
        var fetchedAt: String?
    }

    let client: BackendClient?
    let cache: RecordCache
    let configured: [String: GatewayConfiguration.Member]
    let logger: Logger
    private let state = Mutex<(snapshot: Snapshot, problem: String?)>((Snapshot(members: nil, fetchedAt: nil), nil))
    private let listeners = Mutex<[@Sendable () -> Void]>([])

    init(client: BackendClient?, cache: RecordCache, configured: [String: GatewayConfiguration.Member], logger: Logger) {
        self.client = client
        self.cache = cache
        self.configured = configured
        self.logger = logger
    }

    /// Heard after every change (the wall takes the new names).
    func onChange(_ listener: @escaping @Sendable () -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// The server's members, or nil when the backend keeps none.
    var serverMembers: [BackendMember]? { state.withLock { $0.snapshot.members } }
    var problem: String? { state.withLock { $0.problem } }

    private let loaded = Atomic<Bool>(false)

    /// The first time, loads the last list the cache kept; then asks the backend.
    func refresh() async {
        if !loaded.exchange(true, ordering: .relaxed), let text = try? await cache.loadMetaText(key: Self.cacheKey),
           let saved = try? JSONDecoder().decode(Snapshot.self, from: Data(text.utf8)) {
            state.withLock { s in if s.snapshot.members == nil { s.snapshot = saved } }
            changed()
        }
        await fetch()
    }

    /// Asks the backend for its members now.
    func fetch() async {
        guard let client else { return }
        do {
            let members = try await client.members()
            let snapshot = Snapshot(members: members, fetchedAt: UTCTimestamp.now.iso8601)
            let before = state.withLock { s in
                defer { s = (snapshot, nil) }
                return s.snapshot.members
            }
            if before != members {
                changed()
                if let text = try? JSONEncoder().encode(snapshot) {
                    try? await cache.saveMetaText(key: Self.cacheKey, String(decoding: text, as: UTF8.self))
                }
            }
        } catch {
            state.withLock { $0.problem = "the member list may be out of date: \(error.message)" }
            logger.info("cannot fetch the members from the backend", metadata: ["error": "\(error.message)"])
        }
    }

    /// A member the backend answered with after a change.
    func replace(_ member: BackendMember) {
        state.withLock { s in
            var members = s.snapshot.members ?? []
            members.removeAll { $0.clientID == member.clientID }
            members.append(member)
            s.snapshot.members = members
        }
        changed()
    }

    /// Records who wears a strap until the next fetch says the same.
    func assigned(address: String, clientID: String?) {
        state.withLock { s in
            guard var members = s.snapshot.members else { return }
            for i in members.indices {
                members[i].straps.removeAll { $0.uppercased() == address }
                if members[i].clientID == clientID { members[i].straps.append(address) }
            }
            s.snapshot.members = members
        }
        changed()
    }

    private func changed() {
        for l in listeners.withLock({ $0 }) { l() }
    }

    // MARK: Views

    static func profile(_ m: BackendMember) -> MemberProfile {
        MemberProfile(age: m.age, maxHR: m.maxHR, restingHR: m.restingHR, weightKg: m.weightKg,
                      sex: m.sex.flatMap(MemberProfile.Sex.init(rawValue:)))
    }

    /// Profiles by client id, for workouts (ahead of the configuration's).
    func profiles() -> [String: MemberProfile] {
        Dictionary((serverMembers ?? []).map { ($0.clientID, Self.profile($0)) }, uniquingKeysWith: { a, _ in a })
    }

    /// The wall's view: members by client id, and strap owners by address.
    func wallView() -> (members: [String: WallMember], straps: [String: String]) {
        let members = serverMembers ?? []
        var straps: [String: String] = [:]
        for m in members { for s in m.straps { straps[s.uppercased()] = m.clientID } }
        return (Dictionary(members.map { ($0.clientID, WallMember(name: $0.name, profile: Self.profile($0))) }, uniquingKeysWith: { a, _ in a }),
                straps)
    }
}
