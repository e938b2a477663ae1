// SPDX-License-Identifier: MIT
import Cache
import ClassSummary
import Classes
import CoachPage
import Config
import Logging
import StrapLinks
import Sync
import Timing
import Wall
import WearMetrics

/// The coach page's side in `blegate run`: classes through the class keeper, straps from
/// the links, pairings in the cache (and at blegate-server), profiles at blegate-server.
struct GatewayCoach: CoachActions {
    let configuration: GatewayConfiguration
    let classes: ClassKeeper
    let bluetooth: BluetoothService
    let cache: RecordCache
    let client: BackendClient?
    let sync: SyncEngine?
    let directory: MemberDirectory
    let paired: PairedDevices
    let board: WallBoard
    let logger: Logger

    /// States shown on the page: every strap the gateway hears, not those it was told to
    /// leave alone, nor scales asleep.
    static let hidden: Set<LinkState> = [.notSeen, .denied, .idle, .stopped]

    var room: String { configuration.display.room ?? configuration.display.gymName ?? "Gym" }

    func state() async -> CoachState {
        let registry = (try? await cache.devices()) ?? []
        let paired = Dictionary(registry.compactMap { d in d.member.map { (d.address, $0.clientID) } }, uniquingKeysWith: { a, _ in a })
        let members = memberList()
        let byID = Dictionary(members.map { ($0.clientID, $0) }, uniquingKeysWith: { a, _ in a })
        let serverStraps = directory.wallView().straps
        let names = Dictionary(registry.map { ($0.address, $0.name ?? $0.model) }, uniquingKeysWith: { a, _ in a })
        let straps = bluetooth.links.filter { !Self.hidden.contains($0.state) }.map { link in
            let address = link.address.uppercased()
            let clientID = paired[address] ?? serverStraps[address]
            let member = clientID.map { byID[$0] ?? CoachState.Member(clientID: $0, name: $0) }
            return CoachState.Strap(address: address, name: link.name ?? names[address].flatMap { $0 } ?? "Strap " + ShortID.of(address),
                                    state: link.state.rawValue, reason: link.reason,
                                    hr: link.counters.lastHeartRate.map { Int($0) }, battery: link.counters.lastBattery.map { Int($0) },
                                    member: member)
        }
        let running = classes.current.map { c in
            CoachState.RunningClass(name: c.name ?? "Class", type: c.type.rawValue,
                                    elapsed: max(0, (UTCTimestamp.now.millisecondsSince1970 - c.startMs) / 1000),
                                    length: c.plannedSeconds ?? c.plannedEndMs.map { Int(($0 - c.startMs) / 1000) })
        }
        return CoachState(room: room, classTypes: ClassType.allCases.map(\.rawValue), running: running, straps: straps,
                          members: members.sorted { $0.name.lowercased() < $1.name.lowercased() },
                          membersSource: directory.serverMembers != nil ? "server" : "config", summaryNumber: board.summaryNumber,
                          membersProblem: directory.problem)
    }

    /// The server's members, else the configured ones that have a client id as key.
    func memberList() -> [CoachState.Member] {
        if let server = directory.serverMembers {
            return server.map { CoachState.Member(clientID: $0.clientID, name: $0.name, age: $0.age, maxHR: $0.maxHR, weightKg: $0.weightKg) }
        }
        return configuration.members.filter { !Self.isAddress($0.key) }.map { id, m in
            CoachState.Member(clientID: id, name: m.name ?? id, age: m.age, maxHR: m.maxHR, weightKg: m.weightKg)
        }
    }

    static func isAddress(_ s: String) -> Bool {
        let parts = s.split(separator: ":")
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    func startClass(name: String, type: String, plannedMinutes: Int?) async throws(CoachFailure) {
        guard let kind = ClassType(rawValue: type) else {
            throw CoachFailure("unknown class type \(type); one of " + ClassType.allCases.map(\.rawValue).joined(separator: ", "))
        }
        do {
            _ = try await classes.start(name: name, type: kind, plannedSeconds: plannedMinutes.map { $0 * 60 })
        } catch {
            throw CoachFailure(error.description, status: error.code == .alreadyRunning ? 409 : 400)
        }
    }

    func stopClass() async throws(CoachFailure) {
        do {
            _ = try await classes.stop()
        } catch {
            throw CoachFailure(error.description, status: 409)
        }
    }

    func assign(address: String, clientID: String) async throws(CoachFailure) {
        let address = try Self.strap(address)
        if directory.serverMembers != nil, let client {
            let entry = try? await cache.device(address: address)
            do {
                try await client.assign(address: address, clientID: clientID, name: entry?.name, model: entry?.model)
            } catch {
                throw CoachFailure("not assigned: \(error.message)", status: 502)
            }
            directory.assigned(address: address, clientID: clientID)
        } else if !memberList().contains(where: { $0.clientID == clientID }) {
            throw CoachFailure("no member \(clientID) in this gateway's configuration")
        }
        try await pairLocally(address, clientID)
    }

    func pair(address: String, code: String) async throws(CoachFailure) {
        let address = try Self.strap(address)
        guard let client else { throw CoachFailure("pairing codes need a backend ([backend] url)", status: 409) }
        let entry = try? await cache.device(address: address)
        let clientID: String
        do {
            clientID = try await client.pair(code: code, device: PairingDevice(address: address, name: entry?.name, model: entry?.model))
        } catch {
            throw CoachFailure(error.message, status: error.kind == .unknownCode || error.kind == .codeAlreadyUsed ? 400 : 502)
        }
        directory.assigned(address: address, clientID: clientID)
        try await pairLocally(address, clientID)
        await directory.fetch()
    }

    func unassign(address: String) async throws(CoachFailure) {
        let address = try Self.strap(address)
        if directory.serverMembers != nil, let client {
            do {
                try await client.assign(address: address, clientID: nil, name: nil, model: nil)
            } catch {
                throw CoachFailure("not unassigned: \(error.message)", status: 502)
            }
            directory.assigned(address: address, clientID: nil)
        }
        do {
            try await cache.unpair(address: address)
        } catch {
            throw CoachFailure("cannot store the change in the cache: \(error)", status: 500)
        }
        paired.remove(address)
        logger.notice("device unassigned from the coach page", metadata: ["device": "\(address)"])
    }

    func saveProfile(clientID: String, _ profile: CoachProfile) async throws(CoachFailure) {
        guard directory.serverMembers != nil, let client else {
            throw CoachFailure("members are kept in this gateway's configuration ([members] in the TOML file): edit them there", status: 409)
        }
        do {
            let member = try await client.updateMember(clientID: clientID, MemberProfileChange(age: .some(profile.age), maxHR: .some(profile.maxHR),
                                                                                             weightKg: .some(profile.weightKg)))
            directory.replace(member)
        } catch {
            throw CoachFailure("profile not saved: \(error.message)", status: error.kind == .badRequest ? 400 : 502)
        }
    }

    func summaryHTML() async -> String? {
        guard let last = board.lastSummary() else { return nil }
        var delivery: [String: SummaryView.Delivery] = [:]
        for m in last.members {
            guard let id = m.workoutID else { continue }
            guard client != nil else {
                delivery[id] = .noBackend
                continue
            }
            switch (try? await cache.document(kind: .workout, id: id))?.state {
            case .delivered?: delivery[id] = .delivered
            case .quarantined?: delivery[id] = .rejected
            default: delivery[id] = .pending
            }
        }
        return SummaryView.html(title: last.name, members: last.members, delivery: delivery)
    }

    private func pairLocally(_ address: String, _ clientID: String) async throws(CoachFailure) {
        do {
            let assigned = try await cache.pair(address: address, clientID: clientID)
            paired.insert(address)
            logger.notice("device paired from the coach page", metadata: ["device": "\(address)", "pending_records_assigned": "\(assigned)"])
            await sync?.wake()
        } catch {
            throw CoachFailure("cannot store the pairing in the cache: \(error)", status: 500)
        }
    }

    static func strap(_ address: String) throws(CoachFailure) -> String {
        let upper = address.uppercased()
        guard isAddress(upper) else { throw CoachFailure("not a strap address: \(address)") }
        return upper
    }
}
