// SPDX-License-Identifier: MIT
import BlegateTestSupport
import BlueZ
import Cache
import DBus
import Foundation
import BlegateRun
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blegate run and status", .serialized)
struct RunCommandTests {
    @Test("A bad config is refused before anything starts: exit 78, the dotted key, what is wrong, an example")
    func badConfig() async throws {
        let f = try RunFixture()
        try f.writeConfig(backendURL: "http://127.0.0.1:9", backendExtra: "batch_size = \"many\"")
        let (out, status) = await f.cli("run --bus unix:path=/nonexistent")
        #expect(status == 78, "\(out)")
        #expect(out.contains("backend.batch_size"), "\(out)")
        #expect(out.contains("\"many\""), "\(out)")
        #expect(out.contains("Example: batch_size = 500"), "\(out)")
        #expect(!FileManager.default.fileExists(atPath: f.socketPath))

        try f.writeConfig(backendURL: nil, extra: "[cache]\nretension = \"7d\"\n")
        let (typo, typoStatus) = await f.cli("run --bus unix:path=/nonexistent")
        #expect(typoStatus == 78, "\(typo)")
        #expect(typo.contains("cache.retension") && typo.contains("retention"), "unknown key with the nearest one: \(typo)")
    }

    @Test("A second gateway on the same status socket is refused (exit 1) and the first keeps running")
    func secondInstanceRefused() async throws {
        try await withSimulator({ $0.straps = 1 }) { bus, _ in
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil)
            let first = try await f.run(bus: bus.address)
            #expect(await first.waitForStdout("ready:", timeout: 60), "\(first.stdout)\n\(first.stderr)")
            let (out, status) = await f.cli("run --bus '\(bus.address)'")
            #expect(status == 1, "\(out)")
            #expect(out.contains("another blegate is already running"), "\(out)")
            #expect(try await f.status().source == "service")
            first.signal(SIGTERM)
            #expect(await first.wait(timeout: 60) == 0, "\(first.stdout)")
        }
    }

    @Test("SIGTERM: exit 0 with the cache flushed, notifications released, straps disconnected; status live, then from the database")
    func sigtermAndStatus() async throws {
        try await withSimulator({ c in
            c.straps = 3
            c.seed = 31
            c.rate = 2
        }) { bus, sim in
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil)
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("connected ", count: 3, timeout: 60), "\(run.stdout)")

            // Live: every strap streaming with a heart rate, records in the outbox.
            let live = try await eventually(timeout: 30) {
                let s = try await f.status()
                return s.devices.count == 3 && s.devices.allSatisfy { $0.state == "streaming" && $0.lastHeartRate != nil }
                    && s.outbox.pending > 0
            }
            let report = try await f.status()
            #expect(live, "\(report.json())")
            #expect(report.source == "service")
            #expect(report.sync == nil, "no backend configured")
            #expect(Set(report.devices.map(\.address)) == Set(sim.devices.map(\.address)))
            let text = await f.cli("status")
            #expect(text.status == 0 && text.out.contains("DEVICES") && text.out.contains("streaming"), "\(text.out)")

            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stdout)\n\(run.stderr)")
            #expect(run.stdout.contains("cache flushed"), "\(run.stdout)")
            #expect(run.stdout.contains("stopped"), "\(run.stdout)")
            #expect(!FileManager.default.fileExists(atPath: f.socketPath), "the socket is removed on exit")

            // Everything released: no strap connected, no notification acquired.
            let watcher = try await DBusConnection.connect(bus.busAddress)
            defer { watcher.close() }
            let mirror = BlueZMirror(connection: watcher)
            try await mirror.start()
            defer { mirror.stop() }
            try await mirror.waitUntil(timeout: .seconds(30)) { s in
                s.devices.count == 3 && s.devices.allSatisfy { d in
                    !d.connected && s.characteristics(device: d.path).allSatisfy { !$0.notifying && !$0.notifyAcquired }
                }
            }

            // Stopped: the same devices and outbox from the database, with the registry
            // filled from the stream (names, model, last seen).
            let offline = try await f.status()
            #expect(offline.source == "database")
            #expect(offline.savedAt != nil)
            #expect(offline.outbox.pending >= report.outbox.pending)
            #expect(offline.devices.count == 3)
            for d in offline.devices {
                let identity = try #require(sim.devices.first { $0.address == d.address })
                #expect(d.name == identity.name)
                #expect(d.lastSeen != nil)
                #expect(d.model != nil, "model from Device Information: \(d)")
            }
            // What was committed is, per device, exactly the start of what the simulator
            // sent: nothing lost in between, nothing doubled, in order. (The tail sent while
            // the notifications were being released may be missing: SIGTERM on live straps.)
            let committed = try await committedBeats(path: f.dir + "/cache.sqlite")
            for d in sim.devices {
                let sent = try BeatRecord.sent(sim, d.address).beats
                let mine = committed[d.address] ?? []
                #expect(!mine.isEmpty && mine.count <= sent.count, "\(d.name): committed \(mine.count), sent \(sent.count)")
                #expect(Array(sent.prefix(mine.count)) == mine, "\(d.name): committed records are not the start of what was sent")
            }
        }
    }
}

/// Heart-rate records in a stopped gateway's cache, per device, in outbox order.
func committedBeats(path: String) async throws -> [String: [BeatRecord]] {
    let cache = try RecordCache(path: path, options: CacheOptions(create: false))
    var out: [String: [BeatRecord]] = [:]
    var after: Int64 = 0
    while true {
        let page = try await cache.storedRecords(after: after, limit: 5000)
        guard let last = page.last else { break }
        after = last.sequence
        for s in page where s.record.source == "ble_hrm" && s.record.meta["hr_source"] != "advertisement" {
            guard let contact = s.record.meta["sensor_contact"] else { continue }
            out[s.record.deviceID, default: []].append(BeatRecord(hr: s.record[metric: "hr"], rr: s.record.rrIntervals ?? [], contact: contact))
        }
    }
    try await cache.close()
    return out
}
