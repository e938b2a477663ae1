// SPDX-License-Identifier: MIT
import BlueZ
import DBus
import LinkPolicy
import Synchronization
import Timing

/// Hands out links: one learned `LinkLimit` per adapter, one queue of straps waiting for
/// a link, and `LinkPlanner` deciding who goes where. Straps ask with `request` and get
/// a device object on an adapter with room reserved for them; they report how the
/// connect went, which is what teaches each adapter its limit.
///
/// Synchronous under one lock, so that a plan sees capacities and the queue at one
/// instant; continuations are resumed after the lock is released.
final class LinkScheduler: Sendable {
    struct Grant: Sendable {
        var device: Device
        var adapter: DBusObjectPath
    }

    private struct AdapterEntry {
        var path: DBusObjectPath
        var name: String
        var address: String
        var limit: LinkLimit
    }

    private struct Request {
        var since: Double
        var justDropped: Bool
        var continuation: CheckedContinuation<Grant?, Never>
    }

    private struct LinkEntry {
        var adapter: DBusObjectPath
        var standing: LinkPlanner.Standing
        var signals: SignalBox
    }

    private struct State {
        var adapters: [DBusObjectPath: AdapterEntry] = [:]
        var requests: [String: Request] = [:]
        var links: [String: LinkEntry] = [:]
        var yielding: [String: String] = [:]
        /// Straps whose link ended here, by the adapter it was on, until the mirror shows
        /// that device disconnected: bluetoothd answers Disconnect before it signals
        /// Connected false, and such a device is no link left over to take over.
        var letGo: [String: DBusObjectPath] = [:]
        /// Learned limits by adapter address, including adapters that went away.
        var learned: [String: Int] = [:]
        var lastSeen: [String: Double] = [:]
    }

    private let state: Mutex<State>
    private let mirror: BlueZMirror
    private let configuration: LinkConfiguration
    private let emit: @Sendable (LinkEvent) -> Void
    let startedAt = MonotonicClock.seconds()

    init(mirror: BlueZMirror, configuration: LinkConfiguration, emit: @escaping @Sendable (LinkEvent) -> Void) {
        self.mirror = mirror
        self.configuration = configuration
        self.emit = emit
        var s = State()
        s.learned = configuration.limitMemory?.load() ?? [:]
        state = Mutex(s)
    }

    // MARK: Adapters

    /// An adapter the gateway may use is on the bus (again): it starts from what was
    /// learned about it, by address, on this run or an earlier one.
    func adapterAppeared(_ a: Adapter) {
        let ceiling = configuration.maxLinks(adapter: a.interfaceName, address: a.address)
        let added = state.withLock { s -> Int? in
            guard s.adapters[a.path] == nil else { return nil }
            let remembered = s.learned[a.address.uppercased()]
            let limit = LinkLimit(ceiling: ceiling, remembered: remembered, settings: configuration.linkLimit, now: MonotonicClock.seconds())
            s.adapters[a.path] = AdapterEntry(path: a.path, name: a.interfaceName, address: a.address.uppercased(), limit: limit)
            return limit.limit
        }
        if let limit = added { emit(.adapterReady(adapter: a.interfaceName, limit: limit, learned: state.withLock { $0.learned[a.address.uppercased()] != nil })) }
        replan()
    }

    /// Unplugged: its links went with it; what was learned stays for its return.
    func adapterRemoved(_ path: DBusObjectPath) {
        state.withLock { s in
            s.adapters[path] = nil
            for (address, l) in s.links where l.adapter == path { s.links[address] = nil; s.yielding[address] = nil }
            s.letGo = s.letGo.filter { $0.value != path }
        }
        replan()
    }

    /// Links and limits per adapter, for status and discovery.
    var adapterUse: [AdapterLinks] {
        state.withLock { s in
            s.adapters.values.sorted { $0.name < $1.name }.map {
                AdapterLinks(adapter: $0.name, held: $0.limit.held, connecting: $0.limit.pending, limit: $0.limit.limit,
                             learned: $0.limit.learned, maximum: $0.limit.ceiling, probing: $0.limit.probing)
            }
        }
    }

    // MARK: Requests

    /// Waits for a link; nil when the task is cancelled. `justDropped`: this strap's
    /// link delivered data and dropped, so it keeps its place ahead of equals.
    func request(address: String, justDropped: Bool) async -> Grant? {
        let now = MonotonicClock.seconds()
        let grant: Grant? = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Grant?, Never>) in
                let cancelled = state.withLock { s -> Bool in
                    if Task.isCancelled { return true }
                    s.requests[address] = Request(since: now, justDropped: justDropped, continuation: c)
                    return false
                }
                if cancelled { c.resume(returning: nil) } else { replan() }
            }
        } onCancel: {
            let r = state.withLock { $0.requests.removeValue(forKey: address) }
            r?.continuation.resume(returning: nil)
        }
        return grant
    }

    /// The connect linked.
    func linked(address: String, adapter: DBusObjectPath, signals: SignalBox) {
        let standing = self.standing(address, devices: mirror.devices(address: address))
        let raised = state.withLock { s -> (String, Int)? in
            guard var a = s.adapters[adapter] else { return nil }
            let up = a.limit.linked(now: MonotonicClock.seconds())
            s.adapters[adapter] = a
            s.links[address] = LinkEntry(adapter: adapter, standing: standing, signals: signals)
            s.letGo[address] = nil
            guard let up else { return nil }
            s.learned[a.address] = up
            return (a.name, up)
        }
        if let (name, limit) = raised {
            saveLearned()
            emit(.limitLearned(adapter: name, limit: limit, raised: true))
        }
    }

    /// The connect itself failed. Returns what it said about the adapter.
    func refused(address: String, adapter: DBusObjectPath, kind: ConnectFailureKind) -> LinkLimit.Verdict {
        let (verdict, name) = state.withLock { s -> (LinkLimit.Verdict, String) in
            guard var a = s.adapters[adapter] else { return (.notCapacity, "") }
            let v = a.limit.refused(device: address, couldBeCapacity: kind.couldBeCapacity, now: MonotonicClock.seconds())
            if case .learned(let n) = v { s.learned[a.address] = n }
            s.adapters[adapter] = a
            return (v, a.name)
        }
        if case .learned(let n) = verdict {
            saveLearned()
            emit(.limitLearned(adapter: name, limit: n, raised: false))
        }
        replan()
        return verdict
    }

    /// A granted connect was abandoned (cancelled, or failed before Connect was sent).
    func abandoned(adapter: DBusObjectPath) {
        state.withLock { s in s.adapters[adapter]?.limit.cancel() }
        replan()
    }

    /// Whether a granted connect should still go ahead (the limit may have been learned
    /// lower while it waited for the adapter's turn).
    func mayConnect(adapter: DBusObjectPath) -> Bool {
        state.withLock { $0.adapters[adapter]?.limit.roomForOneMore ?? false }
    }

    /// An established link ended.
    func released(address: String) {
        state.withLock { s in
            s.yielding[address] = nil
            guard let l = s.links.removeValue(forKey: address) else { return }
            s.adapters[l.adapter]?.limit.unlinked()
            s.letGo[address] = l.adapter
        }
        replan()
    }

    /// Who this strap is giving its link to, if it was asked to.
    func yieldingTo(_ address: String) -> String? { state.withLock { $0.yielding[address] } }

    private func saveLearned() {
        guard let memory = configuration.limitMemory else { return }
        memory.save(state.withLock { $0.learned })
    }

    // MARK: Planning

    private func standing(_ address: String, devices: [Device]) -> LinkPlanner.Standing {
        let name = devices.lazy.compactMap { $0.name ?? $0.alias }.first
        return LinkPlanner.Standing(heardByAdvertisement: devices.contains(where: Self.advertisesHeartRate),
                                    paired: configuration.isPaired?(address) ?? false,
                                    rank: configuration.priorityRank(address: address, name: name))
    }

    static func advertisesHeartRate(_ d: Device) -> Bool {
        d.manufacturerData[PolarHeartRate.companyID].flatMap { PolarHeartRate(manufacturerData: $0) } != nil
    }

    static func linkable(_ d: Device) -> Bool { d.uuids.contains(GATTNames.heartRateService) || ScaleLink.isScale(d) }

    /// Whether this strap (upper-case address) is waiting for a link: a device of its
    /// address appearing is then worth a plan; any other device is not.
    func isWaiting(_ address: String) -> Bool { state.withLock { $0.requests[address] != nil } }

    /// The mirrored devices of the straps waiting for a link, and the powered adapters:
    /// looked up by address, so a plan costs the straps waiting, not every device on
    /// the bus.
    private func sighting(of addresses: [String]) -> (devices: [String: [Device]], powered: Set<DBusObjectPath>) {
        mirror.read { s in
            var devices: [String: [Device]] = [:]
            for address in addresses { devices[address] = s.devices(address: address) }
            return (devices, Set(s.adapters.filter(\.powered).map(\.path)))
        }
    }

    /// Grants what can be granted, asks advertisement-heard straps to give way, probes
    /// full adapters. Called whenever anything changed, and once a second.
    func replan() {
        let (byAddress, powered) = sighting(of: state.withLock { Array($0.requests.keys) })
        let now = MonotonicClock.seconds()
        var resumes: [(CheckedContinuation<Grant?, Never>, Grant)] = []
        var yields: [SignalBox] = []
        var probes: [(String, Int)] = []
        state.withLock { s in
            let ready = s.adapters.filter { powered.contains($0.key) }
            var candidates: [LinkPlanner.Candidate] = []
            var devicesOf: [String: [String: Device]] = [:]
            for (address, r) in s.requests {
                let here = (byAddress[address] ?? []).filter { ready[$0.adapter] != nil }
                if !here.isEmpty { s.lastSeen[address] = now }
                if let gone = s.letGo[address], !here.contains(where: { $0.adapter == gone && $0.connected }) {
                    s.letGo[address] = nil
                }
                // Still linked on a controller (an earlier run of the gateway was killed, or
                // bluetoothd kept the link): take that link over where it is. Trying the
                // strap on another adapter would fail, and teach that adapter a false limit.
                // Not the link this strap has just let go of, still shown connected.
                if let up = here.first(where: { $0.connected && Self.linkable($0) && $0.adapter != s.letGo[address] }),
                   s.adapters[up.adapter]!.limit.reserve(existing: true) {
                    s.requests[address] = nil
                    resumes.append((r.continuation, Grant(device: up, adapter: up.adapter)))
                    continue
                }
                let usable = here.filter(Self.linkable)
                guard !usable.isEmpty else { continue }
                var table: [String: Device] = [:]
                for d in usable { table[ready[d.adapter]!.name] = d }
                devicesOf[address] = table
                candidates.append(LinkPlanner.Candidate(address: address, standing: standing(address, devices: here),
                                                        justDropped: r.justDropped, waitingSince: r.since,
                                                        reach: usable.map { LinkPlanner.Reach(adapter: ready[$0.adapter]!.name, rssi: $0.rssi) }))
            }
            var free: [String: Int] = [:]
            var full = Set<String>()
            for a in ready.values {
                free[a.name] = a.limit.free
                if a.limit.inUse >= a.limit.limit { full.insert(a.name) }
            }
            let links = s.links.map { LinkPlanner.Link(address: $0.key, adapter: s.adapters[$0.value.adapter]?.name ?? "", standing: $0.value.standing) }
            let plan = LinkPlanner.plan(waiting: candidates, free: free, full: full, links: links, yielding: Set(s.yielding.keys))
            var unmet = Set(candidates.map(\.address))
            for (address, adapterName) in plan.grants {
                guard let device = devicesOf[address]?[adapterName],
                      let entry = ready.values.first(where: { $0.name == adapterName }),
                      s.adapters[entry.path]!.limit.reserve(),
                      let r = s.requests.removeValue(forKey: address) else { continue }
                unmet.remove(address)
                resumes.append((r.continuation, Grant(device: device, adapter: entry.path)))
            }
            for (giver, taker) in plan.yields {
                guard let l = s.links[giver] else { continue }
                s.yielding[giver] = taker
                yields.append(l.signals)
            }
            // A full adapter that straps wait for tries one more link once it was stable.
            for (path, a) in ready {
                let demand = candidates.contains { c in unmet.contains(c.address) && c.reach.contains { $0.adapter == a.name } }
                if s.adapters[path]!.limit.probe(now: now, demand: demand) {
                    probes.append((a.name, s.adapters[path]!.limit.limit))
                }
            }
        }
        for (c, g) in resumes { c.resume(returning: g) }
        for box in yields { box.post(.yield) }
        for (name, limit) in probes { emit(.limitProbe(adapter: name, limit: limit)) }
    }

    // MARK: Status

    /// Why a strap that asked for a link has none, as status shows it; nil when it is
    /// not waiting for one.
    func explain(_ address: String) -> (LinkState, String)? {
        guard isWaiting(address) else { return nil }
        let (devices, powered) = sighting(of: [address])
        let now = MonotonicClock.seconds()
        return state.withLock { s -> (LinkState, String)? in
            guard s.requests[address] != nil else { return nil }
            let ready = s.adapters.filter { powered.contains($0.key) }
            let here = (devices[address] ?? []).filter { ready[$0.adapter] != nil }
            if here.isEmpty {
                if ready.isEmpty { return (.notSeen, "no adapter is ready") }
                if let seen = s.lastSeen[address] { return (.notSeen, "not seen for " + Self.duration(now - seen)) }
                return (.notSeen, "not seen since the gateway started " + Self.duration(now - startedAt) + " ago")
            }
            if !here.contains(where: Self.linkable) {
                // A strap that only broadcasts never waits for a link: while it is heard
                // with heart rate in its advertisements, it is followed by them, however
                // long since its last new frame.
                let reason = "heard by advertisement only (it offers no connectable heart-rate service)"
                return (here.contains(where: Self.advertisesHeartRate) ? .advertised : .waitingForLink, reason)
            }
            let reach = Set(here.filter(Self.linkable).map(\.adapter))
            let use = ready.values.filter { reach.contains($0.path) }.sorted { $0.name < $1.name }
                .map { "\($0.name) \($0.limit.inUse)/\($0.limit.limit)" }
            return (.waitingForLink, "waiting for a link: " + use.joined(separator: ", ") + " in use")
        }
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(max(0, seconds))
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        return "\(s / 3600) h \(s % 3600 / 60) min"
    }
}
