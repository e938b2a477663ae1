// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import Foundation
import BlegateRun
import Simulator
import Testing
import TestBackend
#if canImport(Glibc)
import Glibc
#endif

/// The end-to-end run: 10 simulated straps → `blegate run` → the loopback backend,
/// through 500s, 429 + Retry-After, a slow backend, a 30 s outage and two SIGKILLs with
/// restarts. Ground truth is the simulator's payload log.
///
/// What it proves: every well-formed Heart Rate Measurement the simulator sent while a
/// gateway was connected is at the backend exactly once, in order, per device. Before each
/// SIGKILL the straps are made quiet (no advertising, links lost) and the gateway is given
/// time to commit, so the kill loses nothing by nature of being a kill: what it tests is
/// that records committed but not yet delivered (the first kill, mid-outage) and records
/// delivered but not yet acknowledged (the second kill, during a slow request) reach the
/// backend once after the restart. Records received but not committed at a SIGKILL are
/// lost by nature and are not part of this check.
@Suite("blegate run end to end", .serialized)
struct GatewayEndToEndTests {
    @Test("10 straps through 500s, 429, a slow backend, a 30 s outage and two SIGKILLs: the backend holds exactly what was sent",
          .timeLimit(.minutes(10)))
    func endToEnd() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token, pairingCodes: ["GYM001"]))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 10
            c.seed = 41
            c.rate = 2
            c.malformedRate = 0.02
        }) { bus, sim in
            let f = try RunFixture()
            // Ten straps on one adapter: room for all of them (the default is 7 slots).
            try f.writeConfig(backendURL: backend.baseURL, extra: "\n[bluetooth]\nmax_per_adapter = 10\n",
                              backendExtra: "batch_size = 50\ninterval = \"1s\"")
            func requests(_ status: Int) -> Int { backend.store.requests.filter { $0.status == status }.count }

            var run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("] connected ", count: 10, timeout: 90), "\(run.stdout)")
            #expect(await backend.waitForRecords(100, timeout: .seconds(60)))

            // Three 500s, then two 429s asking for 2 s, then three slow (3 s) answers.
            backend.faults.add(.status(500, count: 3))
            #expect(await eventually(timeout: 60) { requests(500) >= 3 })
            backend.faults.add(.status(429, retryAfter: "2", count: 2))
            #expect(await eventually(timeout: 60) { requests(429) >= 2 })
            // Status names them: category backend, with the HTTP status.
            let seen = try await f.status().errors.filter { $0.category == "backend" }.compactMap(\.detail)
            #expect(seen.contains("HTTP 500") && seen.contains("HTTP 429"), "\(seen)")
            backend.faults.add(.delay(.seconds(3), count: 3))
            #expect(await eventually(timeout: 60) { backend.faults.faults.isEmpty })

            // A member pairs strap 0 through the running gateway.
            let paired = sim.devices[0].address
            let pairing = await f.cli("pair --device \(paired) --code GYM001")
            #expect(pairing.status == 0, "\(pairing.out)")

            // A 30 s outage; mid-way, SIGKILL with records committed but not delivered.
            await backend.outage(for: .seconds(30))
            #expect(await eventually(timeout: 25) { ((try? await f.status())?.outbox.pending ?? 0) >= 50 }, "records pile up in the outage")
            try await quiet(f, sim)
            let pendingBeforeKill = try await f.status().outbox.pending
            #expect(pendingBeforeKill > 0, "the outage left records pending")
            run.signal(SIGKILL)
            #expect(await run.wait(timeout: 30) != nil)
            run = try await restart(f, bus, sim)
            #expect(await eventually(timeout: 60) { await backend.isListening }, "outage over")
            try await traffic(sim, 10)

            // SIGKILL while a slow request is in flight: the backend may store the batch
            // and answer a dead process; the restarted gateway sends it again. A 503 asking
            // for 6 s keeps records pending while the straps go quiet, so that there is a
            // request to be slow once the 6 s are over.
            backend.faults.add(.status(503, retryAfter: "6", count: 1))
            #expect(await eventually(timeout: 60) { requests(503) >= 1 })
            try await quiet(f, sim)
            let requestsBefore = backend.store.requests.count
            #expect(try await f.status().outbox.pending > 0, "records wait out the Retry-After")
            backend.faults.add(.delay(.seconds(3), count: 1))
            let arrived = await eventually(timeout: 30) { backend.faults.faults.isEmpty }
            #expect(arrived, "a request reached the slow backend")
            run.signal(SIGKILL)
            #expect(await run.wait(timeout: 30) != nil)
            #expect(await eventually(timeout: 30) { backend.store.requests.count > requestsBefore })
            run = try await restart(f, bus, sim)
            try await traffic(sim, 10)

            // The end: straps quiet, everything delivered, SIGTERM.
            try await quiet(f, sim)
            let drained = try await eventually(timeout: 120) { try await f.status().outbox.pending == 0 }
            let final = try await f.status()
            #expect(drained, "\(final.json())")
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stdout)")

            // Exactly the payload log, per device, in order.
            let stored = backend.store.records
            #expect(Set(stored.map(\.id)).count == stored.count)
            var beats = 0
            for d in sim.devices {
                let sent = try BeatRecord.sent(sim, d.address).beats
                let held = stored.filter { $0.deviceID == d.address }.compactMap { BeatRecord.from($0.json) }
                #expect(sent.count > 50, "\(d.name): only \(sent.count) notifications sent")
                #expect(held.count == sent.count, "\(d.name): backend holds \(held.count), simulator sent \(sent.count) well-formed")
                if let i = (0..<min(held.count, sent.count)).first(where: { held[$0] != sent[$0] }) {
                    Issue.record("\(d.name): first difference at \(i): backend \(held[i]), sent \(sent[i])")
                }
                beats += held.count
            }
            // The paired strap's records carry its member from the pairing on.
            let clientID = try #require(backend.store.pairings.first?.clientID)
            let mine = stored.filter { $0.deviceID == paired }
            #expect(mine.last?.clientID == clientID)
            #expect(stored.filter { $0.deviceID != paired }.allSatisfy { $0.clientID == nil })

            // The faults were met, and status saw them.
            #expect(requests(500) >= 3 && requests(429) >= 2)
            #expect(final.sync?.lastSync?.httpStatus == 200)
            let hrv = stored.filter { $0.json["source"]?.string == "ble_hrm" && BeatRecord.from($0.json) == nil }.count
            let duplicates = backend.store.requests.filter { $0.status == 200 && $0.path == "/api/v1/metrics" }.compactMap(\.items).reduce(0, +) - stored.count
            print("end to end: backend holds \(stored.count) records: \(beats) heart-rate (= payload log), \(hrv) HRV, "
                + "\(stored.count - beats - hrv) device/other; \(backend.store.requests.count) requests, "
                + "\(requests(500)) × 500, \(requests(429)) × 429; \(duplicates) records sent again after a failure or kill "
                + "(de-duplicated by id); \(pendingBeforeKill) pending at the first SIGKILL")
        }
    }

    /// Straps stop advertising and lose their links, and the gateway has committed what it
    /// received (`RunFixture.quiet`).
    func quiet(_ f: RunFixture, _ sim: SimulatedBlueZ) async throws {
        try await f.quiet(sim)
    }

    /// A new gateway on the same state directory, and the straps back.
    func restart(_ f: RunFixture, _ bus: PrivateBus, _ sim: SimulatedBlueZ) async throws -> BackgroundProcess {
        let run = try await f.run(bus: bus.address)
        #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
        _ = await sim.startAdvertising("*")
        #expect(await run.waitForStdout("] connected ", count: 10, timeout: 120), "\(run.stdout)")
        return run
    }
}
