// SPDX-License-Identifier: MIT
import BlueZ
import DBus
import NotifySocket
import LinkPolicy
import Synchronization
import Timing
import WearMetrics

/// Keeps every wanted strap connected and streaming, and turns what they send into
/// records for a sink. Used by `blegate stream` and `blegate run`.
///
/// It owns one BlueZ mirror (one set of match rules on the connection), one reader
/// thread for every AcquireNotify socket, one route table for StartNotify values, a
/// controller per adapter (connect turn, discovery, slots) and a link per device.
public final class StrapManager: Sendable {
    public let connection: DBusConnection
    public let mirror: BlueZMirror
    let context: LinkContext

    private struct State {
        var links: [String: (link: any FollowedLink, task: Task<Void, Never>)] = [:]
        var sinks: [UInt64: AsyncStream<LinkEvent>.Continuation] = [:]
        var nextSink: UInt64 = 0
        var stopping = false
        /// bluetoothd left the bus since start (its return is news then, not at start).
        var vanished = false
        /// Heart-rate devices the deny list leaves out, for status (bounded).
        var denied: [String: String] = [:]
        /// The state last logged per strap, so the journal tells each change once.
        var logged: [String: String] = [:]
    }

    private let state = Mutex(State())

    public init(connection: DBusConnection, configuration: LinkConfiguration, sink: any RecordSink) throws(DBusError) {
        self.connection = connection
        let mirror = BlueZMirror(connection: connection)
        self.mirror = mirror
        let emitter = EventFanOut()
        // Every link event (a link found, connecting, lost, a refusal, a probe) is a
        // change the housekeeping may have to act on or log.
        let doorbell = Doorbell()
        let emit: @Sendable (LinkEvent) -> Void = { emitter.emit($0); doorbell.ring() }
        let pipeline = RecordPipeline(sink: sink, hrv: configuration.hrv, limits: configuration.notificationLimits, emit: emit)
        // A round's records reach the sink together (see `RecordSink.receive(_:)`).
        let reader = try NotifySocketReader(gather: configuration.notifyGather, onRoundEnd: { pipeline.releaseHeld() })
        self.fanOut = emitter
        self.doorbell = doorbell
        let scheduler = LinkScheduler(mirror: mirror, configuration: configuration, emit: emit)
        context = LinkContext(connection: connection, mirror: mirror, reader: reader, routes: NotifyRoutes(),
                              pipeline: pipeline, configuration: configuration, adapters: AdapterRegistry(), scheduler: scheduler,
                              emit: emit)
    }

    private let fanOut: EventFanOut
    private let doorbell: Doorbell
    private let recoveries = Mutex<[String: Int]>([:])

    /// Stall recoveries (power-cycles and HCI resets) per adapter name since start.
    public var adapterRecoveries: [String: Int] { recoveries.withLock { $0 } }

    /// Every link event from now on.
    public func events() -> AsyncStream<LinkEvent> { fanOut.stream() }

    /// Sets how long notifications may gather once they come densely, for the AcquireNotify
    /// reader and the connection's signals alike (`LinkConfiguration.notifyGather` at start).
    public func setGather(_ gather: Duration) {
        context.reader.setGather(gather)
        connection.setSignalGather(gather)
    }

    /// The watchdog's probe of the AcquireNotify reader thread (`NotifySocketReader.stall`).
    public func notifyReaderStall(within: Duration) -> String? { context.reader.stall(within: within) }

    /// Status of every followed device, and of heart-rate devices the configuration denies.
    public var links: [LinkStatus] {
        let (followed, denied) = state.withLock { s in (s.links.values.map(\.link), s.denied) }
        var all = followed.map(\.snapshot)
        for (address, name) in denied {
            var d = LinkStatus(address: address, name: name.isEmpty ? nil : name)
            d.state = .denied
            d.reason = "denied by configuration"
            all.append(d)
        }
        return all.sorted { $0.address < $1.address }
    }

    /// What the straps sent since this manager started, and the links made again.
    public var totals: LinkTotals {
        var t = context.pipeline.totals
        t.reconnects = links.reduce(0) { $0 + $1.reconnects }
        return t
    }

    /// Links held, being set up, and allowed per adapter, with how many device objects
    /// bluetoothd has under each.
    public var adapterLinks: [AdapterLinks] {
        let use = context.scheduler.adapterUse
        let counts = mirror.read { s in Dictionary(s.adapters.map { ($0.interfaceName, s.deviceCount(on: $0.path)) }, uniquingKeysWith: { a, _ in a }) }
        return use.map { a in
            var a = a
            a.devices = counts[a.adapter] ?? 0
            return a
        }
    }

    /// Every device bluetoothd holds now, heart-rate devices first: what scanning saw
    /// (`blegate stream` names them when its `--device` matched none).
    public var seenDevices: [(address: String, name: String?, heartRate: Bool)] {
        mirror.devices.map { d in
            (address: d.address.uppercased(), name: d.name ?? d.alias,
             heartRate: d.uuids.contains(GATTNames.heartRateService) || LinkScheduler.advertisesHeartRate(d))
        }.sorted { a, b in a.heartRate != b.heartRate ? a.heartRate : a.address < b.address }
    }

    /// Datagrams read from AcquireNotify sockets.
    public var acquiredDatagrams: Int { context.reader.datagramCount }

    // MARK: Running

    /// Follows devices until the task is cancelled, then lets go of everything
    /// (notifications stopped, devices disconnected) before returning.
    ///
    /// - Throws: when bluetoothd's objects cannot be read at all.
    public func run() async throws(DBusError) {
        let events = mirror.timedEvents()
        // A device heard again, on the dispatcher thread (`BlueZMirror.onHeard`).
        mirror.onHeard { [weak self] d in self?.heard(d) }
        try await context.routes.start(connection: connection, rule: BlueZMirror.matchRules[2])
        try await mirror.start()
        adoptAdapters()
        for device in mirror.devices { consider(device) }
        let housekeeping = Task { await self.housekeeping() }
        for await timed in events {
            if Task.isCancelled { break }
            await handle(timed.event, arrival: timed.receivedAt.map(UTCTimestamp.init(millisecondsSince1970:)))
        }
        housekeeping.cancel()
        await shutdown()
    }

    /// How long bluetoothd gets to answer the calls that let go of everything on shutdown
    /// (StopNotify, Disconnect, StopDiscovery). A daemon busy with a crowded neighbourhood
    /// can take seconds per call, and systemd expects a service to stop promptly: past
    /// this the gateway stops waiting. Nothing is lost by that: AcquireNotify sockets
    /// close with the process, and bluetoothd ends the StartNotify sessions and discovery
    /// of a client that leaves the bus.
    public static let releaseDeadline = Duration.milliseconds(1500)

    /// Stops every link: cancels their loops, stops notifications, disconnects, all within
    /// `releaseDeadline`. Safe to call more than once.
    public func shutdown() async {
        let links = state.withLock { s -> [(link: any FollowedLink, task: Task<Void, Never>)] in
            s.stopping = true
            return Array(s.links.values)
        }
        for l in links { l.task.cancel() }
        for l in links { await l.task.value }
        let adapters = context.adapters.all
        await withTaskGroup(of: Void.self) { race in
            race.addTask {
                await withTaskGroup(of: Void.self) { group in
                    for l in links { group.addTask { await l.link.release(disconnect: true) } }
                }
                for adapter in adapters { await adapter.setWanted(false) }
            }
            race.addTask { try? await Task.sleep(for: Self.releaseDeadline) }
            await race.next()
            race.cancelAll()
        }
        for l in links { l.link.stopped() }
        context.routes.stop(connection: connection)
        mirror.stop()
        context.reader.stop()
        fanOut.finish()
    }

    // MARK: Mirror events

    /// Costs the same for every device, strap or not: a neighbourhood's thousands of
    /// phones and beacons each get a few lookups by address and nothing more (no plan,
    /// no walk over the other devices).
    private func handle(_ event: BlueZEvent, arrival: UTCTimestamp?) async {
        if Self.concernsHousekeeping(event) { doorbell.ring() }
        switch event {
        case .adapterAdded(let a):
            guard adapterAllowed(a) else { break }
            adopt(a)
            // Back on the bus after bluetoothd restarted, its controller may have asked
            // for discovery before the new daemon exported it (and failed): re-apply the
            // wanted state now that it is there, as a power-on does.
            if a.powered { await context.adapters.controller(a.path)?.refresh() }
        case .adapterRemoved(let a):
            post(.adapterGone) { $0.hasPrefix(a.path.rawValue + "/") }
            context.adapters.remove(a.path)
            context.scheduler.adapterRemoved(a.path)
        case .adapterChanged(let a, let changed):
            if changed.contains("Powered") {
                if a.powered { await context.adapters.controller(a.path)?.refresh() } else {
                    post(.adapterGone) { $0.hasPrefix(a.path.rawValue + "/") }
                }
                context.scheduler.replan()
            }
        case .deviceAdded(let d):
            consider(d)
            advertisement(d, arrival: arrival)
            heard(d)
            // A new link asks for a plan itself; only a strap already waiting needs one here.
            if context.scheduler.isWaiting(d.address.uppercased()) { context.scheduler.replan() }
        case .deviceChanged(let d, let changed):
            if !changed.isDisjoint(with: Self.advertisementProperties) { heard(d) }
            if changed.contains("ManufacturerData") { advertisement(d, arrival: arrival) }
            if changed.contains("Connected"), !d.connected { post(.disconnected, path: d.path) }
            if changed.contains("Percentage"), let p = d.batteryPercentage, isLinked(d.path),
               mirror.characteristic(device: d.path, uuid: GATTNames.batteryLevel) == nil {
                context.pipeline.battery(deviceID: d.address.uppercased(), percent: p)
            }
            if changed.contains("UUIDs") || changed.contains("Name") || changed.contains("Alias") || changed.contains("ManufacturerData") {
                consider(d)
            }
        case .deviceRemoved(let d):
            post(.removed, path: d.path)
        case .bluezVanished:
            state.withLock { $0.vanished = true }
            context.emit(.bluetoothdVanished)
            for a in context.adapters.all { await a.reset() }
            post(.vanished) { _ in true }
        case .bluezAppeared:
            if state.withLock({ s -> Bool in defer { s.vanished = false }; return s.vanished }) {
                context.emit(.bluetoothdAppeared)
            }
            adoptAdapters()
            for a in context.adapters.all { await a.refresh() }
            for device in mirror.devices { consider(device) }
        case .gattObjectAdded, .gattObjectRemoved, .gattObjectChanged:
            break
        }
    }

    /// Whether the housekeeping should look at once rather than at its next deadline:
    /// anything but an advertisement's RSSI or data and the GATT tree.
    static func concernsHousekeeping(_ event: BlueZEvent) -> Bool {
        switch event {
        case .deviceChanged(_, let changed): !changed.isSubset(of: advertisementProperties)
        case .gattObjectAdded, .gattObjectRemoved, .gattObjectChanged: false
        default: true
        }
    }

    /// Properties that change only when an advertisement was received.
    static let advertisementProperties: Set<String> = ["RSSI", "ManufacturerData", "ServiceData", "TxPower"]

    private func adapterAllowed(_ a: Adapter) -> Bool {
        context.configuration.adapters.isEmpty || context.configuration.adapters.contains(a.interfaceName)
    }

    private func adoptAdapters() {
        for a in mirror.adapters where adapterAllowed(a) { adopt(a) }
    }

    private func adopt(_ a: Adapter) {
        let path = a.path
        _ = context.adapters.controller(for: path) {
            AdapterController(path: path, connection: connection, health: context.configuration.health, events: context.emit)
        }
        context.scheduler.adapterAppeared(a)
    }

    /// An advertisement of `d` was received: its adapter is alive (`AdapterHealth`), and
    /// a scale is linked only right after it was heard advertising.
    private func heard(_ d: Device) {
        context.adapters.controller(d.adapter)?.noteAdvertisement()
        guard d.rssi != nil, let link = state.withLock({ $0.links[d.address.uppercased()]?.link }) else { return }
        link.heard()
    }

    /// Polar straps' advertised heart rate, for followed straps.
    private func advertisement(_ d: Device, arrival: UTCTimestamp?) {
        guard context.configuration.advertisedRecords, let data = d.manufacturerData[PolarHeartRate.companyID],
              let hr = PolarHeartRate(manufacturerData: data) else { return }
        let address = d.address.uppercased()
        guard state.withLock({ $0.links[address] != nil }) else { return }
        context.pipeline.advertisement(deviceID: address, hr, arrival: arrival)
    }

    /// Starts following a device when the selection accepts it: one that offers the Heart
    /// Rate service, or whose advertisements carry heart rate.
    private func consider(_ d: Device) {
        let address = d.address.uppercased()
        guard !address.isEmpty else { return }
        let isHR = d.uuids.contains(GATTNames.heartRateService) || LinkScheduler.advertisesHeartRate(d)
        let isScale = !isHR && ScaleLink.isScale(d)
        let selection = context.configuration.selection
        guard selection.accepts(address: address, name: d.name ?? d.alias, isHeartRate: isHR || isScale) else {
            if isHR || isScale, selection.deny.contains(where: { DeviceSelection.matches($0, address: address, name: d.name ?? d.alias) }) {
                state.withLock { s in
                    if s.denied.count < 256 || s.denied[address] != nil { s.denied[address] = d.name ?? d.alias ?? "" }
                }
            }
            return
        }
        guard context.configuration.adapters.isEmpty || context.configuration.adapters.contains(String(d.adapter.lastElement)) else { return }
        let context = self.context
        let created = state.withLock { s -> Bool in
            guard !s.stopping, s.links[address] == nil else { return false }
            let link: any FollowedLink = isScale ? ScaleLink(address: address, name: d.name ?? d.alias, context: context)
                : StrapLink(address: address, name: d.name ?? d.alias, context: context)
            let task = Task { await link.run() }
            s.links[address] = (link, task)
            return true
        }
        if created { context.emit(.found(address: address, name: d.name ?? d.alias, adapter: String(d.adapter.lastElement))) }
    }

    private func isLinked(_ path: DBusObjectPath) -> Bool {
        state.withLock { $0.links.values.contains { $0.link.devicePath == path } }
    }

    private func post(_ signal: LinkSignal, path: DBusObjectPath) {
        for l in state.withLock({ Array($0.links.values) }) where l.link.devicePath == path {
            l.link.signals.post(signal)
        }
    }

    private func post(_ signal: LinkSignal, where match: (String) -> Bool) {
        for l in state.withLock({ Array($0.links.values) }) {
            if let p = l.link.devicePath, match(p.rawValue) { l.link.signals.post(signal) }
        }
    }

    // MARK: Housekeeping

    /// The longest the housekeeping sleeps while every link streams and no HRV report is
    /// due: nothing else is due then, so this only bounds what a missed ring could cost.
    static let steadySleep = 60.0

    /// Once a second while any link is not streaming: HRV windows of quiet straps keep
    /// sliding, links are planned again (probes, devices heard anew), each adapter scans
    /// while it has something to find or straps are followed by their advertisements,
    /// stalls are judged, and each strap's change of state is told once.
    ///
    /// While every link streams none of that is due (nobody waits for a link, so no plan,
    /// probe or stall; straps that notify emit their own HRV reports), and a wake-up a
    /// second was most of what an idle gateway cost: it then sleeps until the next HRV
    /// report of a strap gone quiet, and a link event or a change on the bus (`doorbell`)
    /// wakes it at once.
    ///
    /// Once a class is settled (straps followed, every one streaming over its link),
    /// scanning runs in the bursts of `LinkConfiguration.steadyScan`, starting with a
    /// pause; anything that unsettles it (a strap found, lost or waiting) brings
    /// scanning back at once.
    private func housekeeping() async {
        var steady = false
        var settledAt: Double?
        let cycle = context.configuration.steadyScan
        while !Task.isCancelled {
            if steady {
                var wait = context.pipeline.nextTick.map { $0 - WallClock.seconds() } ?? Self.steadySleep
                if let cycle, let t0 = settledAt { wait = min(wait, cycle.untilChange(elapsed: MonotonicClock.seconds() - t0)) }
                // A little past the deadline, so that the tick finds it due.
                await doorbell.sleep(for: .milliseconds(Int64((min(max(wait, 0), Self.steadySleep) + 0.02) * 1000)))
            } else {
                try? await Task.sleep(for: .seconds(1))
            }
            if Task.isCancelled { return }
            context.pipeline.tick()
            context.scheduler.replan()
            let statuses = state.withLock { $0.links.values.map(\.link) }.map(\.snapshot)
            logChanges(statuses)
            let moreToFind = selectionMayFindMore(linked: Set(statuses.map(\.address)))
            let listening = statuses.contains { $0.state != .streaming }
            if statuses.isEmpty || listening {
                settledAt = nil
            } else if settledAt == nil {
                settledAt = MonotonicClock.seconds()
            }
            let burst = settledAt.map { t0 in cycle?.scans(elapsed: MonotonicClock.seconds() - t0) ?? true } ?? true
            let use = context.scheduler.adapterUse
            for adapter in context.adapters.all {
                let name = adapter.name
                let room = use.first { $0.adapter == name }.map { $0.held + $0.connecting < $0.limit } ?? false
                await adapter.setWanted(listening || (moreToFind && room && burst))
                let waiting = statuses.filter { ![.streaming, .advertised, .idle].contains($0.state) && ($0.adapter == nil || $0.adapter == name) }.count
                let streaming = statuses.filter { $0.state == .streaming && $0.adapter == name }.count
                if await adapter.checkHealth(waiting: waiting, streaming: streaming, reset: context.configuration.adapterReset) != nil {
                    let total = await adapter.health.recoveries
                    recoveries.withLock { $0[name] = total }
                }
            }
            steady = statuses.allSatisfy { $0.state == .streaming }
        }
    }

    /// One journal line per change of a strap's state, not per retry.
    private func logChanges(_ statuses: [LinkStatus]) {
        var changes: [LinkEvent] = []
        state.withLock { s in
            for st in statuses {
                let key = st.state == .backingOff ? st.state.rawValue + (st.lastError ?? "") : st.state.rawValue
                guard s.logged[st.address] != key else { continue }
                s.logged[st.address] = key
                changes.append(.stateChanged(address: st.address, state: st.state, reason: st.reason))
            }
        }
        for c in changes { context.emit(c) }
    }
}

extension StrapManager {
    /// Whether scanning could still turn up a device to follow: always in auto mode and
    /// for name patterns; for a list of addresses, until each one is followed.
    func selectionMayFindMore(linked: Set<String>) -> Bool {
        let selection = context.configuration.selection
        if selection.mode == .auto { return true }
        return selection.allow.contains { !DeviceSelection.isAddress($0) || !linked.contains($0.uppercased()) }
    }
}

/// Broadcasts link events to any number of listeners.
final class EventFanOut: Sendable {
    private let sinks = Mutex<(next: UInt64, table: [UInt64: AsyncStream<LinkEvent>.Continuation], finished: Bool)>((0, [:], false))

    func stream() -> AsyncStream<LinkEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: LinkEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let id = sinks.withLock { s -> UInt64? in
            guard !s.finished else { return nil }
            s.next += 1
            s.table[s.next] = continuation
            return s.next
        }
        // Removed by `emit` once its consumer has gone, not by an onTermination that
        // takes the lock: see `BlueZMirror.events()` for the deadlock that avoids.
        if id == nil { continuation.finish() }
        return stream
    }

    func emit(_ event: LinkEvent) {
        sinks.withLock { s in
            for (id, c) in s.table {
                if case .terminated = c.yield(event) { s.table[id] = nil }
            }
        }
    }

    func finish() {
        let all = sinks.withLock { s -> [AsyncStream<LinkEvent>.Continuation] in
            s.finished = true
            defer { s.table = [:] }
            return Array(s.table.values)
        }
        for c in all { c.finish() }
    }
}
