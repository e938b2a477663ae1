// SPDX-License-Identifier: MIT
import BlegateTestSupport
import BlueZ
import DBus
import Foundation
import GATT
import Simulator
import Testing
import WearMetrics

/// The real `blegate stream` against the simulator on a private bus, with the
/// simulator's payload log as the ground truth: every well-formed Heart Rate
/// Measurement it sent must come out once, decoded, in order, whatever happened to the
/// links in between.
@Suite("blegate stream end to end", .serialized)
struct StreamEndToEndTests {
    /// Heart-rate records of `stream`'s JSON output, per device, in output order.
    static func streamed(_ output: String) throws -> [String: [BeatRecord]] {
        var out: [String: [BeatRecord]] = [:]
        for line in output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            // Exactly the Synheart v1.0 top level.
            let keys = Set(object.keys)
            #expect(keys.isSubset(of: ["timestamp", "device_id", "source", "metrics", "meta", "rr_ms"]), "\(line)")
            guard object["source"] as? String == "ble_hrm",
                  let meta = object["meta"] as? [String: String], let contact = meta["sensor_contact"],
                  meta["hr_source"] != "advertisement",
                  let device = object["device_id"] as? String else { continue }
            let metrics = object["metrics"] as? [String: Double] ?? [:]
            out[device, default: []].append(BeatRecord(hr: metrics["hr"], rr: object["rr_ms"] as? [Double] ?? [], contact: contact))
        }
        return out
    }

    static func withSimulator(_ configure: (inout SimulatorConfiguration) -> Void,
                              _ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
        try await withSimulatorOnPrivateBus(configure, body)
    }

    /// Heart-rate lines on stdout so far per device, complete lines only (the stream may be
    /// mid-line), for waiting; `streamed` checks them.
    static func streamedSoFar(_ output: String) -> [String: Int] {
        guard let end = output.lastIndex(of: "\n") else { return [:] }
        var out: [String: Int] = [:]
        for line in output[..<end].split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["source"] as? String == "ble_hrm", let meta = object["meta"] as? [String: String],
                  meta["sensor_contact"] != nil, meta["hr_source"] != "advertisement",
                  let device = object["device_id"] as? String else { continue }
            out[device, default: 0] += 1
        }
        return out
    }

    /// Lets every strap send `count` more notifications: the traffic a phase of a test runs on.
    static func traffic(_ sim: SimulatedBlueZ, _ count: Int = 40) async throws {
        let before = sim.devices.map { sim.payloadLog.records(address: $0.address).count }
        try await eventually("\(count) more notifications from every strap", seconds: 120) {
            zip(sim.devices, before).allSatisfy { sim.payloadLog.records(address: $0.address).count >= $1 + count }
        }
    }

    /// Ends a run so that nothing is in flight: straps stop advertising and lose their
    /// links (the simulator sends nothing while disconnected); once the stream has reported
    /// the losses (each link's queued notifications, malformed ones included, are read
    /// before its loss is handled) and printed every heart rate sent (or `printed` says its
    /// output is complete), Ctrl-C.
    static func finish(_ stream: BackgroundProcess, _ sim: SimulatedBlueZ, printed: (() -> Bool)? = nil) async throws {
        let lostBefore = stream.stderr.components(" disconnected (")
        _ = await sim.stopAdvertising("*")
        let lost = await sim.linkLoss("*")
        // Not asserted here: the summary checks below say what was missed if one never comes.
        _ = await eventually(timeout: 30) { stream.stderr.components(" disconnected (") >= lostBefore + lost }
        if let printed {
            #expect(await eventually(timeout: 60) { printed() }, "the output never completed:\n\(stream.stdout.suffix(3000))")
        } else {
            let all = await eventually(timeout: 60) {
                let got = streamedSoFar(stream.stdout)
                return sim.devices.allSatisfy { d in (got[d.address] ?? 0) >= ((try? BeatRecord.sent(sim, d.address).beats.count) ?? 0) }
            }
            #expect(all, "not every heart rate sent reached stdout: \(streamedSoFar(stream.stdout))")
        }
        stream.signal(SIGINT)
        let status = await stream.wait(timeout: 60)
        #expect(status == 0, "exit status \(String(describing: status)); stderr:\n\(stream.stderr)")
    }

    static func checkExact(_ stream: BackgroundProcess, _ sim: SimulatedBlueZ) throws {
        let got = try streamed(stream.stdout)
        let stderr = stream.stderr
        for d in sim.devices {
            let (beats, malformed) = try BeatRecord.sent(sim, d.address)
            #expect(beats.count > 10, "\(d.name): only \(beats.count) notifications sent")
            let mine = got[d.address] ?? []
            #expect(mine.count == beats.count, "\(d.name): streamed \(mine.count), simulator sent \(beats.count) well-formed")
            if let i = (0..<min(mine.count, beats.count)).first(where: { mine[$0] != beats[$0] }) {
                Issue.record("\(d.name): first difference at \(i): streamed \(mine[i]) sent \(beats[i])")
            }
            #expect(stderr.contains("(\(d.address)): \(mine.count) notifications, \(malformed) malformed (skipped)"),
                    "\(d.name): summary with \(malformed) malformed missing in:\n\(stderr)")
        }
    }

    @Test("5 straps for a minute via AcquireNotify: exactly what was sent, across link losses, Connect failures, a bluetoothd restart and malformed payloads")
    func acquireAcrossFaults() async throws {
        try await Self.withSimulator({ c in
            c.straps = 5
            c.seed = 21
            c.rate = 4
            c.malformedRate = 0.03
        }) { bus, sim in
            let stream = try await BackgroundProcess.start("'\(BlegateBinary.path)' stream --bus '\(bus.address)' --device '*'")
            var connects = 5
            #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 60), "\(stream.stderr)")
            // blegate handed the command to the lean executable: same process, other image.
            let image = executablePath(of: stream.pid) ?? "?"
            #expect(image.hasSuffix("/blegate-stream"), "stream runs in \(image)")

            try await Self.traffic(sim)
            #expect(await sim.linkLoss(sim.devices[0].address) == 1)
            #expect(await sim.linkLoss(sim.devices[1].address) == 1)
            connects += 2
            #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 60), "after link loss:\n\(stream.stderr)")

            try await Self.traffic(sim)
            _ = await sim.failConnect(sim.devices[2].address, count: 3)
            #expect(await sim.linkLoss(sim.devices[2].address) == 1)
            connects += 1
            #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 90), "after Connect failures:\n\(stream.stderr)")
            #expect(stream.stderr.components("connect \(sim.devices[2].address) failed") >= 3, "\(stream.stderr)")

            try await Self.traffic(sim)
            await sim.restartDaemon(after: 1)
            connects += 5
            #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 90), "after the restart:\n\(stream.stderr)")
            #expect(stream.stderr.contains("bluetoothd left the bus"))

            try await Self.traffic(sim)
            #expect(await sim.linkLoss("*") == 5)
            connects += 5
            #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 90), "after losing every link:\n\(stream.stderr)")
            try await Self.traffic(sim)

            try await Self.finish(stream, sim)
            try Self.checkExact(stream, sim)
            #expect(stream.stderr.contains("via AcquireNotify"))
        }
    }

    @Test("StartNotify, Cache=always and Cache=no: resubscribed after every reconnect, nothing lost or doubled",
          arguments: [SimulatorConfiguration.GattCache.always, .no])
    func startNotifyBothCaches(cache: SimulatorConfiguration.GattCache) async throws {
        try await Self.withSimulator({ c in
            c.straps = 3
            c.seed = 5
            c.rate = 4
            c.gattCache = cache
            c.malformedRate = 0.02
        }) { bus, sim in
            let stream = try await BackgroundProcess.start("'\(BlegateBinary.path)' stream --bus '\(bus.address)' --device '*' --notify start")
            var connects = 3
            #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 60), "\(stream.stderr)")
            for round in 0..<2 {
                try await Self.traffic(sim)
                #expect(await sim.linkLoss("*") == 3)
                connects += 3
                #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 60), "round \(round):\n\(stream.stderr)")
            }
            try await Self.traffic(sim)
            // The new daemon takes its name a second before it exports its adapter, as
            // bluetoothd does before mgmt reports the controller: the gateway reads a tree
            // without hci0 first, and must pick the adapter up when it appears.
            await sim.restartDaemon(after: 1, adaptersAfter: 1)
            connects += 3
            #expect(await stream.waitForStderr("stream: connected ", count: connects, timeout: 90), "after the restart:\n\(stream.stderr)")
            try await Self.traffic(sim)
            try await Self.finish(stream, sim)
            try Self.checkExact(stream, sim)
            #expect(stream.stderr.contains("via StartNotify"))
            #expect(!stream.stderr.contains("via AcquireNotify"))
        }
    }

    @Test("Ctrl-C: exit 0, notifications released and every strap disconnected")
    func ctrlCDisconnects() async throws {
        try await Self.withSimulator({ c in
            c.straps = 2
            c.seed = 8
        }) { bus, sim in
            // In blegate itself (no hand-over): the same commands are linked in both.
            let stream = try await BackgroundProcess.start(
                "BLEGATE_IN_PROCESS=1 '\(BlegateBinary.path)' stream --bus '\(bus.address)' --device '*' --format text")
            #expect(await stream.waitForStderr("stream: connected ", count: 2, timeout: 60), "\(stream.stderr)")
            let image = executablePath(of: stream.pid) ?? "?"
            #expect(image.hasSuffix("/blegate"), "stream runs in \(image)")
            #expect(await eventually(timeout: 30) { stream.stdout.contains(sim.devices[0].name) && stream.stdout.contains(" HR ") },
                    "\(stream.stdout)")
            stream.signal(SIGINT)
            #expect(await stream.wait(timeout: 60) == 0, "\(stream.stderr)")
            let watcher = try await DBusConnection.connect(bus.busAddress)
            defer { watcher.close() }
            let mirror = BlueZMirror(connection: watcher)
            try await mirror.start()
            defer { mirror.stop() }
            try await mirror.waitUntil(timeout: .seconds(30)) { s in
                s.devices.count == 2 && s.devices.allSatisfy { !$0.connected }
                    && s.characteristics(device: s.devices[0].path).allSatisfy { !$0.notifying && !$0.notifyAcquired }
            }
            // Text lines for people: name, HR, contact.
            #expect(stream.stdout.contains(sim.devices[0].name), "\(stream.stdout)")
            #expect(stream.stdout.contains(" HR "), "\(stream.stdout)")
        }
    }

    @Test("--interval aggregates per device; --device by address follows only that strap")
    func intervalAndAddress() async throws {
        try await Self.withSimulator({ c in
            c.straps = 3
            c.seed = 9
            c.rate = 4
        }) { bus, sim in
            let target = sim.devices[1]
            let stream = try await BackgroundProcess.start(
                "'\(BlegateBinary.path)' stream --bus '\(bus.address)' --device '\(target.address.lowercased())' --interval 2")
            #expect(await stream.waitForStderr("stream: connected ", count: 1, timeout: 60), "\(stream.stderr)")
            func aggregates() -> [[String: Any]] {
                let out = stream.stdout
                guard let end = out.lastIndex(of: "\n") else { return [] }
                return out[..<end].split(separator: "\n").compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }.filter { ($0["meta"] as? [String: String])?["interval_s"] == "2" }
            }
            func rr(_ lines: [[String: Any]]) -> [Double] { lines.flatMap { $0["rr_ms"] as? [Double] ?? [] } }
            // Two aggregates of 2 s at least; then the end, once the last interval's aggregate
            // holds every RR interval sent.
            #expect(await eventually(timeout: 60) { aggregates().count >= 3 }, "\(stream.stdout)")
            try await Self.finish(stream, sim) {
                rr(aggregates()).count >= ((try? BeatRecord.sent(sim, target.address).beats.flatMap(\.rr).count) ?? 0)
            }
            let lines = stream.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let hr = lines.filter { ($0["meta"] as? [String: String])?["interval_s"] == "2" }
            #expect(hr.count >= 2, "\(stream.stdout)")
            #expect(Set(lines.compactMap { $0["device_id"] as? String }) == [target.address])
            // Every RR interval sent lands in some aggregate.
            let sentRR = try BeatRecord.sent(sim, target.address).beats.flatMap(\.rr)
            let gotRR = rr(hr)
            #expect(gotRR.count == sentRR.count, "aggregated \(gotRR.count) RR, sent \(sentRR.count)")
            #expect(!stream.stderr.contains(sim.devices[0].address))
        }
    }

    @Test("--device matching nothing: named after --find-timeout with the devices seen, exit 8; one of two matching: said, and the stream goes on")
    func noMatch() async throws {
        try await Self.withSimulator({ c in
            c.straps = 2
            c.seed = 10
        }) { bus, sim in
            let nothing = try await BackgroundProcess.start(
                "'\(BlegateBinary.path)' stream --bus '\(bus.address)' --device 'Nope*' --find-timeout 3")
            let status = await nothing.wait(timeout: 60)
            #expect(status == 8, "exit \(String(describing: status)): \(nothing.stderr)")
            #expect(nothing.stderr.contains("no device matching \"Nope*\" found in 3 s of scanning; seen: "), "\(nothing.stderr)")
            #expect(sim.devices.contains { nothing.stderr.contains($0.address) }, "\(nothing.stderr)")

            let one = try await BackgroundProcess.start(
                "'\(BlegateBinary.path)' stream --bus '\(bus.address)' --device 'Nope*' --device '\(sim.devices[0].address)' --find-timeout 2")
            #expect(await one.waitForStderr("no device matching \"Nope*\"", count: 1, timeout: 60), "\(one.stderr)")
            #expect(one.stderr.contains("following the others"), "\(one.stderr)")
            #expect(await one.waitForStderr("stream: connected ", count: 1, timeout: 60), "\(one.stderr)")
            one.signal(SIGINT)
            #expect(await one.wait(timeout: 60) == 0, "\(one.stderr)")
        }
    }
}
