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

/// The connection manager in-process against the simulator: adapter stalls are detected
/// and recovered by power-cycling through BlueZ.
@Suite("Adapter self-healing", .serialized)
struct SelfHealingTests {
    final class CountingSink: RecordSink {
        let count = Atomic<Int>(0)
        func receive(_ record: WearMetrics, kind: RecordKind) { count.add(1, ordering: .relaxed) }
    }

    /// Waits for `what` (60 s unless told), failing the test with its name when it never comes.
    func waitFor(_ what: String, timeout: Double = 60, _ condition: () async -> Bool) async throws {
        try await eventually(what, seconds: timeout, every: .milliseconds(100), condition)
    }

    @Test("a silent scan while straps wait power-cycles the adapter; straps come back once they advertise")
    func silentScanPowerCycles() async throws {
        try await withSimulatedBlueZ({ c in
            c.straps = 2
            c.seed = 4
        }) { bus, sim in
            let connection = try await DBusConnection.connect(bus.busAddress)
            defer { connection.close() }

            var config = LinkConfiguration()
            config.selection = DeviceSelection(mode: .auto)
            config.health = AdapterHealth.Settings(silentScanAfter: 3, abortBurst: 1000, abortWindow: 60, cooldown: 600)
            let manager = try StrapManager(connection: connection, configuration: config, sink: CountingSink())
            let events = manager.events()
            let recoveries = Mutex<[LinkEvent]>([])
            let watcher = Task {
                for await e in events { if case .adapterRecovery = e { recoveries.withLock { $0.append(e) } } }
            }
            let run = Task { try await manager.run() }

            try await waitFor("both straps streaming") { manager.links.count == 2 && manager.links.allSatisfy { $0.state == .streaming } }
            #expect(manager.adapterRecoveries.isEmpty)

            // The straps go quiet and drop: scanning finds nothing while both wait.
            _ = await sim.stopAdvertising("*")
            #expect(await sim.linkLoss("*") == 2)
            try await waitFor("a recovery") { !recoveries.withLock { $0.isEmpty } }
            let first = try #require(recoveries.withLock { $0.first })
            #expect(first == .adapterRecovery(adapter: "hci0", action: "power-cycle", cause: "no advertisements while scanning", error: nil), "\(first)")
            #expect(manager.adapterRecoveries == ["hci0": 1])

            _ = await sim.startAdvertising("*")
            try await waitFor("both straps back") { manager.links.allSatisfy { $0.state == .streaming && $0.connects >= 2 } }
            #expect(manager.adapterRecoveries == ["hci0": 1], "cool-down: one recovery")

            run.cancel()
            _ = await run.result
            watcher.cancel()
        }
    }
}
