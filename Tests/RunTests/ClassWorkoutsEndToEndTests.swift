// SPDX-License-Identifier: MIT
import BackendContract
import BlegateTestSupport
import Foundation
import Simulator
import Testing
import TestBackend
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// Classes and workouts through the real binary: simulated straps → `blegate run` → the
/// loopback backend. Ground truth for each workout is what its strap sent within the class
/// window the gateway acknowledged (class start to class stop): the simulator's payload
/// log, and the backend's copy of the strap's records in that window (which also holds the
/// heart rates a Polar strap advertised before its link came up).
@Suite("Classes and workouts end to end", .serialized)
struct ClassWorkoutsEndToEndTests {
    @Test("a class by hand with 5 straps, a SIGKILL mid-class and the backend down at the end: one workout per strap, matching what it sent in the class",
          .timeLimit(.minutes(8)))
    func handClass() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token, pairingCodes: ["SPIN01"]))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 5
            c.seed = 18
            c.rate = 1
        }) { bus, sim in
            let f = try RunFixture()
            try f.writeConfig(backendURL: backend.baseURL, extra: "\n[bluetooth]\nmax_links = 10\n[workouts]\nmin_duration = \"5s\"\n",
                              backendExtra: "interval = \"1s\"")
            // The straps stay silent until the class runs: everything they send is the class's.
            _ = await sim.stopAdvertising("*")
            var run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")

            let none = await f.cli("class")
            #expect(none.status == 0 && none.out.contains("no class is running"), "\(none.out)")
            #expect(await f.cli("class stop").status == 2, "stop with no class is refused")
            let started = await f.cli("class start --name \"Spin 07:00\" --type cycle")
            #expect(started.status == 0, "\(started.out)")
            let again = await f.cli("class start --name Other")
            #expect(again.status == 2 && again.out.contains("already running"), "\(again.out)")
            #expect(await f.cli("class start --name X --type yoga").status != 0)
            let shown = await f.cli("class --json").out
            let classStart = try #require(Self.startTime(shown).flatMap(UTCTimestamp.init(iso8601:)), "\(shown)").millisecondsSince1970

            _ = await sim.startAdvertising("*")
            #expect(await run.waitForStdout("] connected ", count: 5, timeout: 90), "\(run.stdout)")
            try await traffic(sim, 12)
            // Strap 0's member pairs during the class: the workout carries their client id.
            let pairing = await f.cli("pair --device \(sim.devices[0].address) --code SPIN01")
            #expect(pairing.status == 0, "\(pairing.out)")

            // The kill comes once the straps are quiet and their records committed: what it
            // tests is that the class and its first half survive it, not what a kill loses
            // by nature (records received and not yet committed).
            try await f.quiet(sim)
            let killedAt = UTCTimestamp.now.millisecondsSince1970
            run.signal(SIGKILL)
            #expect(await run.wait(timeout: 30) != nil)
            run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            let restartedAt = UTCTimestamp.now.millisecondsSince1970
            let resumed = await f.cli("class --json")
            #expect(resumed.out.contains("Spin 07:00") && Self.startTime(resumed.out) == Self.startTime(shown),
                    "the class survives the kill: \(resumed.out)")
            _ = await sim.startAdvertising("*")
            #expect(await run.waitForStdout("] connected ", count: 5, timeout: 120), "\(run.stdout)")
            try await traffic(sim, 12)

            try await f.quiet(sim)
            await backend.beginOutage()
            let stopped = await f.cli("class stop --json")
            #expect(stopped.status == 0, "\(stopped.out)")
            let classEnd = try #require(Self.endTime(stopped.out).flatMap(UTCTimestamp.init(iso8601:)), "\(stopped.out)").millisecondsSince1970
            #expect(await f.cli("class stop").status == 2)
            // Workouts wait in the cache while the backend is down.
            #expect(await eventually(timeout: 30) { (try? await f.status())?.outbox.pendingWorkouts == 5 })
            #expect(backend.store.workouts.isEmpty)
            try await backend.endOutage()
            #expect(await backend.wait(timeout: .seconds(60)) { $0.workouts.count == 5 })
            #expect(await eventually(timeout: 60) { ((try? await f.status())?.outbox.pending ?? 1) == 0 })
            // Every workout made is delivered: none left to arrive later as a second one.
            #expect(await eventually(timeout: 60) { (try? await f.status())?.outbox.pendingWorkouts == 0 })

            let workouts = backend.store.workouts
            #expect(workouts.count == 5, "exactly one workout per strap")
            #expect(Set(workouts.compactMap { $0.json["device_id"]?.string }) == Set(sim.devices.map(\.address)))
            let clientID = backend.store.pairings.first?.clientID
            let stored = backend.store.records
            for w in workouts {
                let j = w.json
                let device = try #require(j["device_id"]?.string)
                #expect(j["class_name"]?.string == "Spin 07:00" && j["workout_type"]?.string == "cycle" && j["source"]?.string == "blegate")
                #expect(j["gateway_id"]?.string == "test-gym")
                if device == sim.devices[0].address { #expect(j["client_id"]?.string == clientID) }

                // The strap's records in the class window, as the backend holds them.
                let inClass = stored.filter { $0.deviceID == device }.compactMap { r -> (ms: Int64, json: ContractValue)? in
                    guard let t = UTCTimestamp(iso8601: r.timestamp)?.millisecondsSince1970, t >= classStart, t <= classEnd else { return nil }
                    return (t, r.json)
                }.sorted { $0.ms < $1.ms }
                // They are what the strap sent: every Heart Rate Measurement of its payload
                // log, in order (nothing lost at the kill), and advertised values it sent.
                let sent = try BeatRecord.sent(sim, device).beats
                let linked = inClass.compactMap { BeatRecord.from($0.json) }
                #expect(sent.count >= 20 && linked == sent, "\(device): backend holds \(linked.count) link records in the class, strap sent \(sent.count)")
                let advertised = Set(sim.payloadLog.adverts(address: device).map { Double($0.heartRate) })
                let fromAdverts = inClass.filter { $0.json["meta"]?["hr_source"]?.string == "advertisement" }.compactMap { $0.json["metrics"]?["hr"]?.number }
                #expect(Set(fromAdverts).isSubset(of: advertised), "\(device): advertised \(fromAdverts) not in \(advertised)")
                let heard = inClass.compactMap { r -> (ms: Int64, hr: Double)? in
                    guard let hr = r.json["metrics"]?["hr"]?.number, hr > 0, r.json["meta"]?["sensor_contact"]?.string != "not_detected" else { return nil }
                    return (r.ms, hr)
                }
                let first = try #require(heard.first, "\(device): no heart rate in the class"), last = try #require(heard.last)
                #expect(heard.contains { $0.ms < killedAt } && heard.contains { $0.ms > restartedAt }, "\(device): heard before the kill and after the restart")

                let start = try #require(j["start_time"]?.string.flatMap(UTCTimestamp.init(iso8601:))).millisecondsSince1970
                let end = try #require(j["end_time"]?.string.flatMap(UTCTimestamp.init(iso8601:))).millisecondsSince1970
                let duration = try #require(j["duration_seconds"]?.number)
                #expect(abs(start - first.ms) <= 2000, "\(device): start \(start) vs first heart rate \(first.ms)")
                #expect(abs(end - last.ms) <= 2000, "\(device): end \(end) vs last heart rate \(last.ms)")
                let span = Double(last.ms - first.ms) / 1000
                #expect(abs(duration - span) <= 2, "\(device): duration \(duration) vs \(span)")
                let mean = heard.map(\.hr).reduce(0, +) / Double(heard.count)
                #expect(abs((j["avg_heart_rate"]?.number ?? 0) - mean) <= 0.5, "\(device): \(String(describing: j["avg_heart_rate"])) vs \(mean)")
                #expect(j["max_heart_rate"]?.number == heard.map(\.hr).max()?.rounded(), "\(device): \(String(describing: j["max_heart_rate"]))")
                let zones = j["seconds_in_zone"]?.array?.compactMap(\.number) ?? []
                #expect(zones.count == 6 && zones.reduce(0, +) == duration, "\(device): \(zones) vs \(duration)")
                // Coverage: the share of the workout's seconds with a heart rate heard (the
                // quiet stretch around the kill is not covered).
                let seconds = Int(duration)
                let covered = Set(heard.map { Int(($0.ms - first.ms) / 1000) }.filter { $0 < seconds }).count
                let expected = seconds > 0 ? Double(covered) / Double(seconds) : 1
                #expect(abs((j["coverage"]?.number ?? -1) - expected) <= 0.0015, "\(device): coverage \(String(describing: j["coverage"])) vs \(expected)")
                print("class workouts end to end: \(device): \(sent.count) notifications sent = link records in the class, "
                    + "\(fromAdverts.count) advertised; workout \(Int(duration)) s (heard \(String(format: "%.1f", span)) s), "
                    + "avg \(j["avg_heart_rate"]?.number ?? 0) (records \(String(format: "%.2f", mean))), max \(j["max_heart_rate"]?.number ?? 0), "
                    + "coverage \(j["coverage"]?.number ?? 0) (records \(String(format: "%.3f", expected)))")
            }
            try await checkCommands(f, workouts: workouts)
            run.signal(SIGTERM)
            _ = await run.wait(timeout: 30)
        }
    }

    /// `blegate workouts` lists them as delivered; `blegate export` writes a FIT file that
    /// Garmin's FIT SDK reads with the workout's figures, and a TCX file valid against
    /// Garmin's schema.
    func checkCommands(_ f: RunFixture, workouts: [BackendDocument]) async throws {
        let table = await f.cli("workouts --class \"Spin 07:00\"")
        #expect(table.status == 0 && table.out.split(separator: "\n").filter { $0.contains("delivered") }.count == 5, "\(table.out)")
        let lines = await f.cli("workouts --json")
        #expect(lines.out.split(separator: "\n").filter { $0.contains("\"delivery\":\"delivered\"") }.count == 5, "\(lines.out)")
        #expect(await f.cli("workouts --class Yoga").out.contains("no workouts"))

        let w = try #require(workouts.first).json
        let id = try #require(w["id"]?.string)
        let fit = f.dir + "/member.fit", tcx = f.dir + "/member.tcx"
        let written = await f.cli("export --workout \(id.prefix(8)) --format fit --output '\(fit)'")
        #expect(written.status == 0 && written.out.contains("heart rates"), "\(written.out)")
        #expect(await f.cli("export --workout \(id.prefix(8)) --format tcx --output '\(tcx)'").status == 0)
        #expect(await f.cli("export --workout ffffffff").status == 64)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let avg = Int((w["avg_heart_rate"]?.number ?? 0).rounded()), max = Int(w["max_heart_rate"]?.number ?? 0)
        let zones = (w["seconds_in_zone"]?.array ?? []).compactMap(\.number).map { String(Int($0)) }.joined(separator: ",")
        let check = await shell("'\(root)/.build/test-python/bin/python' '\(root)/scripts/check_fit.py' '\(fit)' --avg-hr \(avg) --max-hr \(max) "
            + "--elapsed \(Int(w["duration_seconds"]?.number ?? 0)) --zones \(zones) 2>&1")
        #expect(check.status == 0, "\(check.out)")
        let schema = await shell("xmllint --noout --schema '\(root)/.build/test-schemas/TrainingCenterDatabasev2.xsd' '\(tcx)' 2>&1")
        #expect(schema.status == 0, "\(schema.out)")
    }

    @Test("a class from the timetable survives a restart and yields its workouts when its slot ends", .timeLimit(.minutes(6)))
    func scheduledClass() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 3
            c.seed = 7
            c.rate = 1
        }) { bus, sim in
            // A slot that began this minute, on the local clock, and ends 45 to 105 s from now.
            let now = Date()
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .current
            let parts = calendar.dateComponents([.hour, .minute, .second, .weekday], from: now)
            let day = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][parts.weekday! - 1]
            let minutes = parts.second! <= 15 ? 1 : 2
            let slotStart = Int64((calendar.date(bySettingHour: parts.hour!, minute: parts.minute!, second: 0, of: now)!.timeIntervalSince1970 * 1000).rounded())
            let slotEnd = slotStart + Int64(minutes) * 60_000
            let f = try RunFixture()
            try f.writeConfig(backendURL: backend.baseURL, extra: """

                [bluetooth]
                max_links = 10
                [workouts]
                min_duration = "5s"
                [[classes]]
                name = "Noon HIIT"
                type = "hiit"
                days = ["\(day)"]
                start = "\(String(format: "%02d:%02d", parts.hour!, parts.minute!))"
                duration = "\(minutes)m"

                """, backendExtra: "interval = \"1s\"")
            var run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await eventually(timeout: 30) { await f.cli("class --json").out.contains("Noon HIIT") })
            let first = await f.cli("class --json").out
            #expect(first.contains("\"scheduled\""), "\(first)")
            #expect(Self.startTime(first).flatMap(UTCTimestamp.init(iso8601:))?.millisecondsSince1970 == slotStart, "the class starts at its slot: \(first)")
            #expect(await run.waitForStdout("] connected ", count: 3, timeout: 90), "\(run.stdout)")
            #expect(await backend.waitForRecords(15, timeout: .seconds(60)))

            run.signal(SIGKILL)
            #expect(await run.wait(timeout: 30) != nil)
            run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            let second = await f.cli("class --json").out
            #expect(Self.startTime(first) != nil && Self.startTime(first) == Self.startTime(second), "same class after the restart: \(first) / \(second)")
            #expect(await run.waitForStdout("] connected ", count: 3, timeout: 90), "\(run.stdout)")

            #expect(await backend.wait(timeout: .seconds(Int64(minutes * 60 + 90))) { $0.workouts.count == 3 })
            // Each workout spans the member's heart rates within the slot: from the first
            // heard after the slot began to the last before it ended (the straps kept sending).
            let stored = backend.store.records
            for w in backend.store.workouts {
                let j = w.json
                #expect(j["class_name"]?.string == "Noon HIIT" && j["workout_type"]?.string == "hiit")
                let device = try #require(j["device_id"]?.string)
                #expect(Set(sim.devices.map(\.address)).contains(device))
                let start = try #require(j["start_time"]?.string.flatMap(UTCTimestamp.init(iso8601:))).millisecondsSince1970
                let end = try #require(j["end_time"]?.string.flatMap(UTCTimestamp.init(iso8601:))).millisecondsSince1970
                #expect(start >= slotStart && end <= slotEnd, "\(device): \(start)…\(end) outside the slot \(slotStart)…\(slotEnd)")
                #expect(end >= slotEnd - 5000, "\(device): heard until \(end), the slot ends at \(slotEnd)")
                let heard = stored.filter { $0.deviceID == device && ($0.json["metrics"]?["hr"]?.number ?? 0) > 0 }
                    .compactMap { UTCTimestamp(iso8601: $0.timestamp)?.millisecondsSince1970 }.filter { $0 >= slotStart && $0 <= slotEnd }
                let firstHeard = try #require(heard.min(), "\(device): no heart rate in the slot")
                #expect(abs(start - firstHeard) <= 2000, "\(device): start \(start) vs first heart rate in the slot \(firstHeard)")
                #expect(abs((j["duration_seconds"]?.number ?? -1) - Double(end - start) / 1000) <= 1)
            }
            #expect(await eventually(timeout: 10) { await f.cli("class").out.contains("no class is running") })
            run.signal(SIGTERM)
            _ = await run.wait(timeout: 30)
        }
    }

    @Test("open gym: a member's workout closes after the idle time", .timeLimit(.minutes(5)))
    func openGym() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 2
            c.seed = 3
            c.rate = 1
        }) { bus, sim in
            let f = try RunFixture()
            try f.writeConfig(backendURL: backend.baseURL, extra: """

                [workouts]
                idle_close = "10s"
                min_duration = "5s"
                open_gym_type = "strength"

                """, backendExtra: "interval = \"1s\"")
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("] connected ", count: 2, timeout: 90), "\(run.stdout)")
            #expect(await backend.waitForRecords(30, timeout: .seconds(60)))
            // The members leave: no strap is heard any more.
            _ = await sim.stopAdvertising("*")
            _ = await sim.linkLoss("*")
            let left = ContinuousClock.now
            #expect(await backend.wait(timeout: .seconds(90)) { $0.workouts.count == 2 })
            #expect(ContinuousClock.now - left >= .seconds(9), "not closed before the idle time")
            for w in backend.store.workouts {
                #expect(w.json["class_name"] == .null || w.json["class_name"] == nil)
                #expect(w.json["workout_type"]?.string == "strength")
                #expect((w.json["duration_seconds"]?.number ?? 0) >= 10)
            }
            run.signal(SIGTERM)
            _ = await run.wait(timeout: 30)
        }
    }

    /// `end_time` of the class in a `blegate class stop --json` answer (UTC, to the millisecond).
    static func endTime(_ answer: String) -> String? {
        guard let data = answer.data(using: .utf8), let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let c = o["class"] as? [String: Any] else { return nil }
        return c["end_time"] as? String
    }

    /// `start_time` of the class in a `blegate class --json` answer.
    static func startTime(_ answer: String) -> String? {
        guard let data = answer.data(using: .utf8), let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let c = o["class"] as? [String: Any] else { return nil }
        return c["start_time"] as? String
    }
}
