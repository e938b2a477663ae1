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

/// A whole class on one gateway: 40 straps on two adapters whose link limits (4 and 7)
/// the gateway is not told, 12 of them advertising heart rate (4 only advertising), one
/// adapter unplugged for 60 s. Ground truth is the simulator's payload log.
@Suite("A class of 40 on one gateway", .serialized)
struct ClassEndToEndTests {
    @Test("limits learned, capacity used by straps that need links, adverts as records, every wait explained, an unplug survived, nothing lost or doubled",
          .timeLimit(.minutes(10)))
    func wholeClass() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.adapters = 2
            c.straps = 40
            c.advertising = 12
            c.advertisingOnly = 4
            c.linkLimits = [4, 7]
            c.seed = 77
        }) { bus, sim in
            let f = try RunFixture()
            try f.writeConfig(backendURL: backend.baseURL, backendExtra: "batch_size = 200\ninterval = \"1s\"")
            let advertising = Set(sim.devices.filter { $0.model.advertisesHeartRate }.map(\.address))
            let needLinks = Set(sim.devices.filter { !$0.model.advertisesHeartRate }.map(\.address))
            #expect(advertising.count == 12 && needLinks.count == 28)

            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")

            // Both limits learned from refusals; all capacity held by straps that need links.
            func full(_ r: StatusReport, _ a: String, _ n: Int) -> Bool {
                r.adapters?.first { $0.adapter == a }.map { $0.links == n && $0.limit == n && $0.learnedLimit == n } ?? false
            }
            func streaming(_ r: StatusReport) -> [StatusReport.DeviceStatus] { r.devices.filter { $0.state == "streaming" } }
            let settled = try await eventually(timeout: 120) {
                let r = try await f.status()
                return full(r, "hci0", 4) && full(r, "hci1", 7) && streaming(r).count == 11
                    && streaming(r).allSatisfy { needLinks.contains($0.address) }
                    && r.devices.filter { advertising.contains($0.address) }.allSatisfy { $0.state == "advertised" }
            }
            var report = try await f.status()
            #expect(settled, "\(report.json())")
            let classStart = Date()

            // Every selected strap not streaming says why.
            #expect(report.devices.count == 40)
            for d in report.devices where d.state != "streaming" {
                #expect(d.reason?.isEmpty == false, "\(d.address) \(d.state) without a reason")
                if needLinks.contains(d.address) {
                    // Waiting for a link on both adapters; or a second after a refusal at the
                    // limit (waiting, retried without backoff); or trying the one link above a
                    // limit that a stable, full adapter is probed with after a minute.
                    let waiting = d.state == "waiting-for-link" && d.reason!.contains("hci0 ") && d.reason!.contains("hci1 ")
                    let refused = d.state == "waiting-for-link" && d.reason!.contains("refuse")
                    let probing = ["connecting", "resolving"].contains(d.state)
                    #expect(waiting || refused || probing, "\(d.address) \(d.state): \(d.reason ?? "")")
                }
            }

            // hci1 unplugged for 60 s.
            let onHci1 = Set(streaming(report).filter { $0.adapter == "hci1" }.map(\.address))
            #expect(onHci1.count == 7)
            await sim.removeAdapter(1, returnAfter: 60)
            let unplugged = Date()
            // Within 20 s its straps are followed again as far as hci0 has room (it is full
            // with straps that need their links), and each says why it waits.
            let moved = try await eventually(timeout: 20) {
                let r = try await f.status()
                return r.adapters?.first { $0.adapter == "hci0" }?.links == 4 && r.adapters?.contains { $0.adapter == "hci1" } == false
                    && r.devices.filter { onHci1.contains($0.address) }.allSatisfy {
                        $0.state == "streaming" || ($0.state == "waiting-for-link" && $0.reason?.contains("hci0 ") == true)
                    }
            }
            report = try await f.status()
            #expect(moved, "\(report.json())")
            #expect(report.adapterRecoveries?.values.reduce(0, +) ?? 0 == 0, "a full adapter is not a stalled one")

            // Back after 60 s: full capacity within 30 s of the replug, with the limit it had.
            let replugged = try await eventually(timeout: 75) { try await f.status().adapters?.contains { $0.adapter == "hci1" } == true }
            #expect(replugged)
            let returned = try await f.status().adapters?.first { $0.adapter == "hci1" }
            #expect(returned?.learnedLimit == 7 && returned?.limit == 7, "the replugged adapter starts from its learned limit: \(String(describing: returned))")
            let back = Date()
            let refilled = try await eventually(timeout: 30) {
                let r = try await f.status()
                return full(r, "hci0", 4) && full(r, "hci1", 7) && streaming(r).count == 11
            }
            report = try await f.status()
            #expect(refilled, "\(report.json())")
            print("class: unplugged \(Int(back.timeIntervalSince(unplugged))) s, full again \(String(format: "%.1f", Date().timeIntervalSince(back))) s after the replug")
            // About 10 s of the class at full capacity (a linked strap may yet be probed
            // off its link, so the count is over all of them).
            try await traffic(sim, inAll: 110, from: streaming(report).map(\.address))

            // The end: quiet, delivered, SIGTERM.
            let classEnd = Date()
            try await f.quiet(sim)
            let drained = try await eventually(timeout: 120) { try await f.status().outbox.pending == 0 }
            #expect(drained)
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stdout)")

            // Linked straps: exactly the payload log, per device, in order.
            let stored = backend.store.records
            #expect(Set(stored.map(\.id)).count == stored.count)
            for d in sim.devices {
                let sent = try BeatRecord.sent(sim, d.address).beats
                let held = stored.filter { $0.deviceID == d.address }.compactMap { BeatRecord.from($0.json) }
                #expect(held.count == sent.count, "\(d.name): backend holds \(held.count), simulator sent \(sent.count) well-formed")
                if let i = (0..<min(held.count, sent.count)).first(where: { held[$0] != sent[$0] }) {
                    Issue.record("\(d.name): first difference at \(i): backend \(held[i]), sent \(sent[i])")
                }
            }
            // Advertising straps: heart rate in at least 80 % of their seconds of the class.
            let iso = ISO8601DateFormatter()
            iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let span = Int(classEnd.timeIntervalSince(classStart))
            for address in advertising {
                let seconds = Set(stored.filter { $0.deviceID == address && $0.json["metrics"]?["hr"]?.number != nil }
                    .compactMap { $0.json["timestamp"]?.string.flatMap(iso.date(from:)) }
                    .filter { $0 >= classStart && $0 < classEnd }
                    .map { Int($0.timeIntervalSince(classStart)) })
                #expect(Double(seconds.count) >= 0.8 * Double(span), "\(address): heart rate in \(seconds.count) of \(span) s")
                #expect(stored.contains { $0.deviceID == address && $0.json["meta"]?["hr_source"]?.string == "advertisement" })
            }
        }
    }
}
