// SPDX-License-Identifier: MIT
import BlegateTestSupport
import BlueZ
import DBus
import StrapLinks
import LinkPolicy
import Simulator
import Synchronization
import Testing
import WearMetrics

/// The connection manager in-process against the simulator: links shared by need across
/// adapters whose limits it learns, advertisement records, and links that are kept.
@Suite("Links shared across adapters", .serialized)
struct LinkSharingTests {
    final class Sink: RecordSink {
        let records = Mutex<[(WearMetrics, RecordKind)]>([])
        func receive(_ record: WearMetrics, kind: RecordKind) { records.withLock { $0.append((record, kind)) } }
        func advertised(_ address: String) -> Int {
            records.withLock { $0.filter { $0.0.deviceID == address && $0.0.meta["hr_source"] == "advertisement" }.count }
        }
    }

    final class EventLog: Sendable {
        private let events = Mutex<[LinkEvent]>([])
        func append(_ e: LinkEvent) { events.withLock { $0.append(e) } }
        func withLock<T>(_ body: ([LinkEvent]) -> T) -> T { events.withLock { body($0) } }
    }

    final class Memory: LinkLimitMemory {
        let limits = Mutex<[String: Int]>([:])
        func load() -> [String: Int] { limits.withLock { $0 } }
        func save(_ l: [String: Int]) { limits.withLock { $0 = l } }
    }

    /// A manager on its own connection, its events collected, until `body` returns.
    func withManager(_ bus: PrivateBus, _ configure: (inout LinkConfiguration) -> Void = { _ in }, sink: Sink = Sink(),
                     _ body: (StrapManager, EventLog) async throws -> Void) async throws {
        let connection = try await DBusConnection.connect(bus.busAddress)
        defer { connection.close() }
        var config = LinkConfiguration()
        config.selection = DeviceSelection(mode: .auto)
        config.jitterSeed = 3
        configure(&config)
        let manager = try StrapManager(connection: connection, configuration: config, sink: sink)
        let seen = EventLog()
        let events = manager.events()
        let watcher = Task { for await e in events { seen.append(e) } }
        let run = Task { try await manager.run() }
        do {
            try await body(manager, seen)
        } catch {
            run.cancel()
            _ = await run.result
            watcher.cancel()
            throw error
        }
        run.cancel()
        _ = await run.result
        watcher.cancel()
    }

    func simulator(_ configure: (inout SimulatorConfiguration) -> Void) async throws -> (PrivateBus, SimulatedBlueZ) {
        var c = SimulatorConfiguration()
        configure(&c)
        let bus = try PrivateBus.start()
        let sim = try SimulatedBlueZ(configuration: c, bus: bus.busAddress)
        try await sim.start()
        return (bus, sim)
    }

    /// Waits for `what` (60 s unless told), failing the test with its name when it never comes.
    func waitFor(_ what: String, timeout: Double = 60, _ condition: () async -> Bool) async throws {
        try await eventually(what, seconds: timeout, every: .milliseconds(100), condition)
    }

    func streaming(_ m: StrapManager) -> [LinkStatus] { m.links.filter { $0.state == .streaming } }

    @Test("a link that delivered data reconnects at once however short it was; no backoff, no flapping")
    func deliveredLinksAreKept() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 1; c.seed = 8; c.rate = 4 }
        defer { bus.stop() }
        try await withManager(bus) { m, seen in
            for round in 1...4 {
                try await waitFor("streaming, round \(round)") { streaming(m).count == 1 }
                let before = m.links[0].counters.heartRate
                try await waitFor("data on the link") { m.links[0].counters.heartRate > before + 2 }
                #expect(await sim.linkLoss("*") == 1)
                try await waitFor("the loss seen") {
                    seen.withLock { $0.filter { if case .disconnected = $0 { true } else { false } }.count } == round
                }
            }
            try await waitFor("streaming again") { streaming(m).count == 1 }
            let drops = seen.withLock { $0.compactMap { e -> (Double, Bool)? in
                if case let .disconnected(_, _, retryIn, flapping) = e { return (retryIn, flapping) } else { return nil }
            } }
            #expect(drops.count == 4)
            #expect(drops.allSatisfy { $0.0 == 0 && !$0.1 }, "\(drops)")
            #expect(m.links[0].reconnects == 4)
        }
        await sim.stop()
    }

    @Test("limits learned from refusals, never reset as a stall, remembered by address for the next start")
    func learnedAndRemembered() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 6; c.seed = 9; c.linkLimits = [3] }
        defer { bus.stop() }
        let memory = Memory()
        let denied = sim.devices[5].address
        try await withManager(bus, { $0.limitMemory = memory; $0.selection = DeviceSelection(mode: .auto, deny: [denied]) }) { m, seen in
            try await waitFor("three streaming, the limit learned") {
                streaming(m).count == 3 && m.adapterLinks.first?.learned == 3
            }
            #expect(m.adapterRecoveries.isEmpty)
            try await waitFor("the denied strap listed") { m.links.contains { $0.address == denied } }
            let d = m.links.first { $0.address == denied }
            #expect(d?.state == .denied && d?.reason == "denied by configuration")
            let waiting = m.links.filter { $0.state != .streaming && $0.state != .denied }
            #expect(waiting.count == 2)
            for w in waiting { #expect(w.reason != nil, "\(w.address) \(w.state) with no reason") }
            // The event reaches the collector after the state it reports is visible.
            try await waitFor("the limit-learned event") { seen.withLock { $0.contains(.limitLearned(adapter: "hci0", limit: 3, raised: false)) } }
        }
        let address = sim.adapterAddress(0)
        #expect(memory.load() == [address: 3])
        _ = await sim.linkLoss("*")
        // The next start begins at the learned limit: no refusal needed to find it again.
        try await withManager(bus, { $0.limitMemory = memory }) { m, seen in
            try await waitFor("three streaming again") { streaming(m).count == 3 }
            #expect(m.adapterLinks.first?.limit == 3)
            #expect(!seen.withLock { $0.contains { if case .limitLearned = $0 { true } else { false } } })
            #expect(seen.withLock { $0.contains(.adapterReady(adapter: "hci0", limit: 3, learned: true)) })
        }
        await sim.stop()
    }

    @Test("a settled class scans in bursts: off between them, and a strap that walks in is found in the next one")
    func settledClassScansInBursts() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 3; c.seed = 12; c.advertising = 0 }
        defer { bus.stop() }
        let newcomer = sim.devices[2].address
        #expect(await sim.stopAdvertising(newcomer) == 1)
        let cycle = try #require(ScanCycle(burst: 1, period: 4))
        try await withManager(bus, { $0.steadyScan = cycle }) { m, _ in
            try await waitFor("two streaming") { streaming(m).count == 2 }
            #expect(!m.links.contains { $0.address == newcomer })
            // Everyone followed streams: the pause begins, so discovery goes off.
            try await waitFor("discovery off in the pause", timeout: 20) { m.mirror.adapters.first?.discovering == false }
            #expect(await sim.startAdvertising(newcomer) == 1)
            // Found only by scanning (the simulator reports devices to discovery alone).
            try await waitFor("the newcomer found in a burst and streaming", timeout: 30) {
                streaming(m).contains { $0.address == newcomer }
            }
            try await waitFor("off again once all three stream", timeout: 20) { m.mirror.adapters.first?.discovering == false }
        }
        await sim.stop()
    }

    @Test("with no pause configured, scanning stays on while the class is settled")
    func continuousScanWithoutCycle() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 2; c.seed = 13; c.advertising = 0 }
        defer { bus.stop() }
        try await withManager(bus, { $0.steadyScan = nil }) { m, _ in
            try await waitFor("two streaming") { streaming(m).count == 2 }
            // Past where a 1 s in 4 s cycle would have paused it: the housekeeping has
            // looked at the settled class (it logs every change of state once).
            try await waitFor("the settled class seen") { m.links.allSatisfy { $0.state == .streaming } }
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline {
                #expect(m.mirror.adapters.first?.discovering == true)
                try await Task.sleep(for: .milliseconds(250))
            }
        }
        await sim.stop()
    }

    @Test("an unplugged adapter's straps move to another with room; back, it is used again")
    func unplug() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 4; c.adapters = 2; c.seed = 10; c.linkLimits = [3, 3] }
        defer { bus.stop() }
        try await withManager(bus, { $0.maxLinks = 3 }) { m, _ in
            // Delivering: a link that brought nothing yet is a flap when it drops, and backs off.
            try await waitFor("four streaming and delivering") { streaming(m).count == 4 && streaming(m).allSatisfy { $0.counters.heartRate > 0 } }
            let onHci1 = streaming(m).filter { $0.adapter == "hci1" }.map(\.address)
            #expect(onHci1.count == 2, "spread by free room: \(streaming(m).map { $0.adapter ?? "-" })")
            await sim.removeAdapter(1, returnAfter: 0)
            try await waitFor("hci0 full again within 20 s", timeout: 20) {
                streaming(m).count == 3 && streaming(m).allSatisfy { $0.adapter == "hci0" }
            }
            // The fourth may still be in the short back-off of its lost link when hci0
            // fills; once that is over it waits for room, and says where there is none.
            try await waitFor("the fourth waiting for room on hci0", timeout: 20) {
                let left = m.links.filter { $0.state != .streaming }
                return left.count == 1 && left.first?.reason?.contains("hci0 3/3") == true
            }
            #expect(streaming(m).count == 3)
            await sim.returnAdapter(1)
            try await waitFor("hci1 used again within 30 s", timeout: 30) {
                streaming(m).count == 4 && streaming(m).contains { $0.adapter == "hci1" }
            }
        }
        await sim.stop()
    }

    @Test("a strap that gave its link away does not take it back: bluetoothd answers Disconnect before Connected turns false")
    func yieldedLinkGoesToTheTaker() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 2; c.adapters = 2; c.seed = 14; c.advertising = 1; c.linkLimits = [1, 1] }
        defer { bus.stop() }
        let h10 = try #require(sim.devices.first { $0.model == .polarH10 })
        let plain = try #require(sim.devices.first { $0.model != .polarH10 && $0.model != .polarBroadcast })
        try await withManager(bus, { $0.maxLinks = 1 }) { m, seen in
            try await waitFor("both streaming, one per adapter") { streaming(m).count == 2 && streaming(m).allSatisfy { $0.counters.heartRate > 0 } }
            let plainOn = try #require(streaming(m).first { $0.address == plain.address }?.adapter)
            let h10On = try #require(streaming(m).first { $0.address == h10.address }?.adapter)
            let from = seen.withLock { $0.count }
            await sim.removeAdapter(plainOn == "hci0" ? 0 : 1, returnAfter: 0)
            try await waitFor("the plain strap streaming on \(h10On) within 20 s", timeout: 20) {
                streaming(m).contains { $0.address == plain.address && $0.adapter == h10On }
            }
            let after = seen.withLock { Array($0[from...]) }
            let gave = after.firstIndex {
                if case .disconnected(let a, let reason, _, _) = $0 { return a == h10.address && reason.hasPrefix("gave its link to") }
                return false
            }
            let given = try #require(gave, "the H10 gave its link: \(after.map(\.message))")
            let taken = after[given...].firstIndex {
                if case .connected(let a, _, _, _) = $0 { return a == plain.address }
                return false
            }
            let rest = after[given..<(taken ?? after.endIndex)]
            #expect(!rest.contains { if case .connecting(let a, _) = $0 { return a == h10.address } else { return false } },
                    "the H10 tried its link again before the plain strap had it: \(rest.map(\.message))")
            #expect(!rest.contains { if case .connectFailed(let a, _, _, _) = $0 { return a == plain.address } else { return false } },
                    "the plain strap was refused the link given to it: \(rest.map(\.message))")
        }
        await sim.stop()
    }

    @Test("a broadcast-only strap is advertised while heard, also when no new frame came for seconds")
    func broadcastOnlyStaysAdvertised() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 1; c.seed = 12; c.advertising = 1; c.advertisingOnly = 1 }
        defer { bus.stop() }
        let only = try #require(sim.devices.first { $0.model == .polarBroadcast })
        let sink = Sink()
        try await withManager(bus, sink: sink) { m, _ in
            try await waitFor("records from the broadcast-only strap") { sink.advertised(only.address) >= 2 }
            // On its hook it goes on broadcasting one frozen frame: heard, no new record.
            // Ten reports (0.6-1.4 s apart) later the last record is more than 5 s old.
            _ = await sim.setWorn(only.address, worn: false)
            func delivered() async -> Int { await sim.advertisingReports(only.address)?.delivered ?? 0 }
            let atHook = await delivered()
            try await waitFor("ten reports of the strap on its hook") { await delivered() >= atHook + 10 }
            let s = try #require(m.links.first { $0.address == only.address })
            #expect(s.state == .advertised, "\(s.state) \(s.reason ?? "")")
            #expect(s.reason?.contains("heard by advertisement only") == true, "\(s.reason ?? "")")
        }
        await sim.stop()
    }

    @Test("advertised heart rate: records for a strap with no link, none from a strap on a hook, none while a link delivers")
    func advertisements() async throws {
        let (bus, sim) = try await simulator { c in c.straps = 3; c.seed = 12; c.advertising = 2; c.advertisingOnly = 1 }
        defer { bus.stop() }
        let only = try #require(sim.devices.first { $0.model == .polarBroadcast })
        let h10 = try #require(sim.devices.first { $0.model == .polarH10 })
        let sink = Sink()
        try await withManager(bus, sink: sink) { m, _ in
            try await waitFor("records from the broadcast-only strap") { sink.advertised(only.address) >= 3 }
            try await waitFor("the H10 streaming") { streaming(m).contains { $0.address == h10.address } }
            #expect(m.links.first { $0.address == only.address }?.state == .advertised)
            // Linked and delivering: its advertisements add nothing.
            // Four more advertisements with heart rate go out while it streams.
            let before = sink.advertised(h10.address)
            let sent = sim.payloadLog.adverts(address: h10.address).count
            try await waitFor("four advertisements from the linked H10") { sim.payloadLog.adverts(address: h10.address).count >= sent + 4 }
            #expect(sink.advertised(h10.address) == before, "advertisements while the link delivers")
            // On a hook: the broadcast goes on with a frozen frame, and gives nothing. Counted
            // in the strap's own reports: once two have gone out after the hook (the block
            // without contact, then the same again), the records of its worn frames are in;
            // then four more reports reach the gateway and make no record.
            _ = await sim.setWorn(only.address, worn: false)
            func delivered() async -> Int { await sim.advertisingReports(only.address)?.delivered ?? 0 }
            let atHook = await delivered()
            try await waitFor("two reports of the strap on its hook") { await delivered() >= atHook + 2 }
            let hooked = sink.advertised(only.address)
            try await waitFor("four more reports of the strap on its hook") { await delivered() >= atHook + 6 }
            #expect(sink.advertised(only.address) == hooked, "records from a strap on a hook")
            _ = await sim.setWorn(only.address, worn: true)
            try await waitFor("records again once worn") { sink.advertised(only.address) > hooked }
            let r = try #require(sink.records.withLock { $0.last { $0.0.deviceID == only.address }?.0 })
            #expect(r.source == "ble_hrm" && r.rrIntervals == nil && r[metric: "hr"] != nil)
        }
        await sim.stop()
    }
}
