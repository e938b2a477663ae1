// SPDX-License-Identifier: MIT
import BackendContract
import BlegateTestSupport
import Foundation
import Simulator
import Testing
import TestBackend
#if canImport(Glibc)
import Glibc
#endif

/// A scale stepped on in the simulator → `blegate run` → the backend's profile metrics,
/// through the real binary, across SIGKILLs.
@Suite("Scales end to end", .serialized)
struct ScaleEndToEndTests {
    static let metricsPath = "/api/v1/profile-metrics"

    /// Profile-metric documents the backend answered 200 for, counted per item sent.
    static func sentItems(_ backend: TestBackend) -> Int {
        backend.store.requests.filter { $0.path == metricsPath && $0.status == 200 }.reduce(0) { $0 + ($1.items ?? 0) }
    }

    /// The scale records the backend holds for `device`.
    static func scaleRecords(_ backend: TestBackend, device: String) -> [ContractValue] {
        backend.store.records.map(\.json).filter { $0["device_id"]?.string == device && $0["source"]?.string == "ble_wss" }
    }

    @Test("an imperial scale of a paired member: 181.28 lb and 70.1 in reach the backend as 82.227 kg and 178.1 cm, once, across SIGKILLs and a crash between record and document; an unpaired scale gives none",
          .timeLimit(.minutes(8)))
    func imperialScale() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token, pairingCodes: ["SCALE1"]))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 2
            c.scales = 2
            c.seed = 23
        }) { bus, sim in
            let scales = sim.devices.filter { $0.model == .scale }
            try #require(scales.count == 2)
            let scale = scales[0].address, stranger = scales[1].address
            let f = try RunFixture()
            try f.writeConfig(backendURL: backend.baseURL, backendExtra: "interval = \"1s\"")
            var run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("] connected ", count: 2, timeout: 90), "\(run.stdout)")

            let pairing = await f.cli("pair --device \(scale) --code SCALE1")
            #expect(pairing.status == 0, "\(pairing.out)")
            let clientID = try #require(backend.store.pairings.first?.clientID)

            // Through the simulator's D-Bus control interface, as a script would.
            let step = await shell("busctl --address='\(bus.address)' call org.blegate.Simulator /org/blegate/Simulator "
                                   + "org.blegate.Simulator1 StepOn sdddb \(scale) 181.28 70.1 0 true")
            #expect(step.status == 0 && step.out.contains("u 1"), "\(step.out)")
            // The unpaired scale weighs someone too (SI units): a record, no profile metric.
            #expect(try await sim.stepOn(stranger, ScaleReading(weight: 70, height: 170, imperial: false)) == 1)

            #expect(await backend.wait(timeout: .seconds(90)) { $0.profileMetrics.count >= 2 }, "\(run.stdout)")
            #expect(await eventually(timeout: 90) { !Self.scaleRecords(backend, device: stranger).isEmpty }, "\(run.stdout)")
            let record = try #require(Self.scaleRecords(backend, device: scale).first)
            #expect(abs((record["metrics"]?["weight_kg"]?.number ?? 0) - 82.2272) < 0.001, "\(record)")
            #expect(record["meta"]?["units_reported"]?.string == "imperial")
            #expect(Self.scaleRecords(backend, device: stranger).first?["metrics"]?["weight_kg"]?.number == 70)

            func check(_ expected: [(metric: String, value: Double, unit: String)]) {
                let metrics = backend.store.profileMetrics.map(\.json)
                #expect(metrics.count == expected.count, "\(metrics)")
                #expect(Set(metrics.compactMap { $0["id"]?.string }).count == metrics.count)
                #expect(metrics.allSatisfy { $0["client_id"]?.string == clientID && $0["device_id"]?.string == scale })
                for e in expected {
                    let hits = metrics.filter { $0["metric"]?.string == e.metric && $0["unit"]?.string == e.unit
                        && abs(($0["value"]?.number ?? 0) - e.value) < 0.0005 }
                    #expect(hits.count == 1, "\(e.metric) \(e.value) \(e.unit): \(metrics)")
                }
                #expect(Self.sentItems(backend) == expected.count, "each profile metric was sent once")
            }
            let first: [(metric: String, value: Double, unit: String)] = [("weight", 82.227, "kg"), ("height", 178.1, "cm")]
            check(first)
            // The scale's link is let go: it is idle again (it went to sleep).
            #expect(await eventually(timeout: 30) {
                (try? await f.status())?.devices.first { $0.address == scale }?.state == "idle"
            })

            // SIGKILL and restart: the recovery on start stores the same documents again
            // (no-ops), nothing is sent twice.
            run.signal(SIGKILL)
            #expect(await run.wait(timeout: 30) != nil)
            run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            let records = backend.store.records.count
            #expect(await backend.waitForRecords(records + 10, timeout: .seconds(90)), "\(run.stdout)\n\(run.stderr)")
            check(first)

            // A crash between the record's commit and its documents: the gateway that
            // weighs never stores the documents; the next one finds the record and does.
            run.signal(SIGKILL)
            #expect(await run.wait(timeout: 30) != nil)
            run = try await BackgroundProcess.start("BLEGATE_TEST_LOSE_PROFILE_METRICS=1 \(f.blegate) run --config '\(f.configPath)' --bus '\(bus.address)'")
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(try await sim.stepOn(scale, ScaleReading(weight: 150, height: 65, imperial: true)) == 1)
            #expect(await eventually(timeout: 90) { Self.scaleRecords(backend, device: scale).count == 2 }, "\(run.stdout)")
            #expect(await eventually(timeout: 10) { ((try? await f.status())?.outbox.pending ?? 1) == 0 })
            check(first)
            run.signal(SIGKILL)
            #expect(await run.wait(timeout: 30) != nil)
            run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await backend.wait(timeout: .seconds(60)) { $0.profileMetrics.count >= 4 })
            // 150 lb = 68.0389 kg, 65 in = 165.1 cm.
            check(first + [("weight", 68.039, "kg"), ("height", 165.1, "cm")])

            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 30) == 0)
        }
    }

    @Test("scales whose Connects fail while they advertise teach the adapter no link limit and grow no backoff: the next weighing gets through",
          .timeLimit(.minutes(5)))
    func refusedScale() async throws {
        try await withSimulator({ c in
            c.straps = 2
            c.scales = 2
            c.seed = 29
            // Awake long enough to be tried several times after the settled class's
            // scanning pause (up to 7 s) has passed, one failed Connect after another.
            c.scaleAwake = 30
        }) { bus, sim in
            let scales = sim.devices.filter { $0.model == .scale }.map(\.address)
            try #require(scales.count == 2)
            let scale = scales[0]
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil)
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("] connected ", count: 2, timeout: 90), "\(run.stdout)")
            // Every Connect to the scales fails as a full controller's would (two straps
            // refused this way at 2 links would make 2 the adapter's limit).
            for s in scales {
                #expect(await sim.failConnect(s, count: 1000) == 1)
                #expect(try await sim.stepOn(s, ScaleReading(weight: 80, height: 180, imperial: false)) == 1)
            }
            // While it stays awake it is tried again and again; none gets through.
            #expect(await eventually(timeout: 60) {
                var left = 0
                for s in scales { left = max(left, await sim.connectFailuresLeft(s) ?? 1000) }
                return left <= 996
            }, "\(run.stdout)")
            #expect(scales.allSatisfy { sim.payloadLog.records(address: $0).isEmpty })
            let status = try await f.status()
            #expect(status.adapters?.first?.learnedLimit == nil, "\(String(describing: status.adapters))")
            #expect(status.devices.first { $0.address == scale }?.state != "backing-off")
            // Awake again with Connects working: the reading is taken at once.
            #expect(await sim.failConnect(scale, count: 0) == 1)
            #expect(try await sim.stepOn(scale, ScaleReading(weight: 80, height: 180, imperial: false)) == 1)
            #expect(await eventually(timeout: 30) { sim.payloadLog.records(address: scale).count == 1 })
            #expect(await run.waitForStdout("connected UC-352BLE", timeout: 30), "\(run.stdout)")
            let after = try await f.status()
            #expect(after.adapters?.first?.learnedLimit == nil)
            #expect(!FileManager.default.fileExists(atPath: f.dir + "/link-limits.json")
                    || !((try? String(contentsOfFile: f.dir + "/link-limits.json", encoding: .utf8)) ?? "").contains("\""))
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 30) == 0)
        }
    }
}
