// SPDX-License-Identifier: MIT
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// `blegate-bench stream --blegate PATH`: the CPU, memory and loss figures of `blegate stream` as a
/// process of its own. The simulator (`blegate simulate --private-bus`) is another
/// process; `blegate stream --format none` decodes, normalizes and feeds HRV for every
/// notification and prints nothing per record. Over a steady window the benchmark reads
/// the stream process's CPU clock and counts, in the simulator's payload log, the Heart
/// Rate notifications sent in that window. Then it pauses the straps (SetRate to one per
/// 1000 s), lets blegate drain, stops it with SIGINT, and compares every notification the
/// log says left with the counts blegate prints at exit: the difference is exact.
enum StreamBenchmarks {
    struct Scenario {
        var label: String
        var straps: Int
        var rate: Double
        var notify: String
        /// Straps that must be streaming before the window opens (0: none is followed).
        var expected: Int
        var devicePattern = "*"
    }

    struct Outcome {
        var scenario: Scenario
        var window: Double
        var sentInWindow: Int
        var cpuInWindow: Double
        var peakRSS: Int
        var rssAnon: Int
        var rssFile: Int
        var sent: Int
        var received: Int
        var droppedAtSocket: Int
        var reconnects: Int
    }

    static func run(_ args: [String]) async throws {
        guard let blegate = option(args, "--blegate") else {
            throw BenchError("--blegate PATH needed (the release blegate binary; scripts/bench.sh stream passes it)")
        }
        let seconds = option(args, "--seconds").flatMap(Double.init) ?? 10
        let straps = option(args, "--straps").flatMap(Int.init) ?? 10
        let rates = option(args, "--rate").map { $0.split(separator: ",").compactMap { Double($0) } } ?? [50, 3000]
        let methods = option(args, "--notify").map { $0.split(separator: ",").map(String.init) } ?? ["acquire", "start"]
        let rssStraps = option(args, "--rss-straps").flatMap(Int.init) ?? 50
        let gather = option(args, "--gather-ms")

        var scenarios: [Scenario] = []
        for rate in rates {
            for m in methods {
                scenarios.append(Scenario(label: "\(straps)×\(fixed(rate, 0)) Hz \(m)", straps: straps, rate: rate, notify: m, expected: straps))
            }
        }
        if rssStraps > 0 {
            scenarios.append(Scenario(label: "\(rssStraps)×1 Hz acquire", straps: rssStraps, rate: 1, notify: "acquire", expected: rssStraps))
        }
        scenarios.append(Scenario(label: "no strap followed", straps: 1, rate: 1, notify: "acquire", expected: 0, devicePattern: "no such strap*"))

        report("blegate stream --format none --gather-ms \(gather ?? "8 (default)"), \(fixed(seconds, 0)) s steady window per scenario; \(onlineCPUs()) CPUs, load \(loadAverage())")
        var outcomes: [Outcome] = []
        for s in scenarios {
            do {
                let o = try await measure(s, blegate: blegate, seconds: seconds, gather: gather)
                outcomes.append(o)
                report(line(o))
            } catch {
                report("\(s.label): not measured: \(error)")
            }
        }
        report("")
        report(table(outcomes))
    }

    /// `gather`: `stream --gather-ms` (nil: the default).
    static func measure(_ s: Scenario, blegate: String, seconds: Double, gather: String?) async throws -> Outcome {
        var template = Array("/tmp/blegate-bench-stream-XXXXXX".utf8CString)
        guard let dirPointer = mkdtemp(&template) else { throw BenchError("mkdtemp failed (errno \(errno))") }
        let dir = String(cString: dirPointer)
        let log = dir + "/sent.jsonl"

        let sim = try ChildProcess(blegate, ["simulate", "--private-bus", "--straps", String(s.straps), "--rate", fixed(s.rate, 3),
                                             "--seed", "7", "--payload-log", log],
                                   name: "blegate simulate", stdout: dir + "/simulate.out", stderr: dir + "/simulate.err")
        var simStopped = false
        defer { if !simStopped { kill(sim.pid, SIGKILL); var st: Int32 = 0; _ = waitpid(sim.pid, &st, 0) } }
        let address = try await waitForBusAddress(dir + "/simulate.out", sim)

        let gw = try ChildProcess(blegate, ["stream", "--bus", address, "--device", s.devicePattern, "--notify", s.notify,
                                            "--format", "none", "--max-per-adapter", String(max(7, s.straps))]
                                            + (gather.map { ["--gather-ms", $0] } ?? []),
                                  name: "blegate stream", stdout: nil, stderr: dir + "/stream.err")
        var gwStopped = false
        defer { if !gwStopped { kill(gw.pid, SIGKILL); var st: Int32 = 0; _ = waitpid(gw.pid, &st, 0) } }

        if s.expected > 0 {
            try await waitForStreaming(dir + "/stream.err", count: s.expected, gw)
        }
        try await Task.sleep(for: .seconds(2))  // every strap at its pace, HRV windows filling

        let t0 = monotonicMilliseconds()
        let cpu0 = try gw.cpuSeconds()
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let cpu1 = try gw.cpuSeconds()
        let t1 = monotonicMilliseconds()

        // Pause the straps, so that what the log holds is everything that will ever be sent.
        let control = try await DBusConnection.connect(.address(address))
        defer { control.close() }
        try await control.call(destination: "org.blegate.Simulator", path: "/org/blegate/Simulator", interface: "org.blegate.Simulator1",
                               member: "SetRate", [.double(0.001)])
        try await Task.sleep(for: .seconds(1))
        try await control.call(destination: "org.blegate.Simulator", path: "/org/blegate/Simulator", interface: "org.blegate.Simulator1",
                               member: "FlushPayloadLog")
        let dropped = try await control.call(destination: "org.blegate.Simulator", path: "/org/blegate/Simulator",
                                             interface: "org.blegate.Simulator1", member: "DroppedNotifications").first?.integerValue ?? 0
        try await gw.waitUntilIdle()
        let peak = gw.status("VmHWM") ?? 0
        let anon = gw.status("RssAnon") ?? 0
        let file = gw.status("RssFile") ?? 0

        let status = await gw.stop(SIGINT)
        gwStopped = true
        guard status == 0 else { throw BenchError("blegate stream exited with status \(status); see \(dir)/stream.err") }
        let summary = StreamSummary(readText(dir + "/stream.err") ?? "")
        guard summary.devices == s.expected else {
            throw BenchError("blegate stream summarised \(summary.devices) device(s), expected \(s.expected); see \(dir)/stream.err")
        }
        control.close()
        await sim.stop(SIGINT)
        simStopped = true

        guard let bytes = readBytes(log) else { throw BenchError("no payload log at \(log)") }
        let tally = PayloadLogTally(bytes: bytes, windowMilliseconds: t0..<t1)
        unlink(log)
        return Outcome(scenario: s, window: (t1 - t0) / 1000, sentInWindow: tally.inWindow, cpuInWindow: cpu1 - cpu0,
                       peakRSS: peak, rssAnon: anon, rssFile: file, sent: tally.total, received: summary.notifications,
                       droppedAtSocket: Int(dropped), reconnects: summary.reconnects)
    }

    /// The simulator's first stdout line is `DBUS_SYSTEM_BUS_ADDRESS=...`; `ready:` follows
    /// once org.bluez is served.
    static func waitForBusAddress(_ path: String, _ sim: ChildProcess) async throws -> String {
        let end = wallSeconds() + 30
        while wallSeconds() < end {
            if let text = readText(path), text.contains("\nready:") || text.hasPrefix("ready:"),
               let first = text.split(separator: "\n").first, first.hasPrefix("DBUS_SYSTEM_BUS_ADDRESS=") {
                return String(first.dropFirst("DBUS_SYSTEM_BUS_ADDRESS=".count))
            }
            if sim.hasExited() { throw BenchError("blegate simulate exited before it was ready") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("blegate simulate not ready after 30 s")
    }

    /// Waits for `count` distinct "connected ..., notifications via ..." lines on stderr.
    static func waitForStreaming(_ path: String, count: Int, _ gw: ChildProcess) async throws {
        let end = wallSeconds() + 60 + Double(count)
        var seen = 0
        while wallSeconds() < end {
            let text = readText(path) ?? ""
            var devices = Set<Substring>()
            for line in text.split(separator: "\n") where line.contains(", notifications via ") {
                if let r = line.firstRange(of: "connected ") { devices.insert(line[r.upperBound...].prefix { $0 != "," }) }
            }
            seen = devices.count
            if seen >= count { return }
            if gw.hasExited() { throw BenchError("blegate stream exited early: \(text.suffix(400))") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("only \(seen) of \(count) straps streaming after the timeout")
    }

    // MARK: Output

    static func line(_ o: Outcome) -> String {
        "\(o.scenario.label): \(perNotification(o)) µs/notification, \(fixed(Double(o.sentInWindow) / o.window, 0))/s achieved "
            + "(\(fixed(Double(o.scenario.straps) * o.scenario.rate, 0))/s offered), blegate CPU \(fixed(o.cpuInWindow / o.window * 100, 1)) %, "
            + "peak RSS \(mib(o.peakRSS)) MiB (anon \(mib(o.rssAnon)), file \(mib(o.rssFile)) at end), "
            + "sent \(o.sent), received \(o.received), lost \(o.sent - o.received), dropped at full socket \(o.droppedAtSocket), reconnects \(o.reconnects)"
    }

    static func perNotification(_ o: Outcome) -> String {
        o.sentInWindow > 0 ? fixed(o.cpuInWindow * 1e6 / Double(o.sentInWindow), 2) : "-"
    }

    static func table(_ outcomes: [Outcome]) -> String {
        let header = ["scenario", "offered/s", "achieved/s", "µs/notif", "CPU %", "peak RSS MiB", "sent", "received", "lost", "socket drops"]
        var rows = [header]
        for o in outcomes {
            rows.append([o.scenario.label, fixed(Double(o.scenario.straps) * o.scenario.rate, 0), fixed(Double(o.sentInWindow) / o.window, 0),
                         perNotification(o), fixed(o.cpuInWindow / o.window * 100, 1), mib(o.peakRSS),
                         String(o.sent), String(o.received), String(o.sent - o.received), String(o.droppedAtSocket)])
        }
        var widths = [Int](repeating: 0, count: header.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        return rows.enumerated().map { n, r in
            let cells = r.enumerated().map { i, c in
                let pad = String(repeating: " ", count: widths[i] - c.count)
                return i == 0 ? c + pad : pad + c
            }
            let text = "| " + cells.joined(separator: " | ") + " |"
            return n == 0 ? text + "\n|" + widths.enumerated().map { i, w in
                String(repeating: "-", count: w + 1) + (i == 0 ? "-" : ":")
            }.joined(separator: "|") + "|" : text
        }.joined(separator: "\n")
    }

    static func mib(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 1) }

    static func monotonicMilliseconds() -> Double { wallSeconds() * 1000 }

    static func onlineCPUs() -> Int { sysconf(Int32(_SC_NPROCESSORS_ONLN)) }

    static func loadAverage() -> String {
        (readText("/proc/loadavg") ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// What `blegate stream` prints per device at exit:
/// `blegate stream: NAME (ADDR): N notifications, M malformed (skipped), K reconnect(s), A from advertisements`.
struct StreamSummary {
    var devices = 0
    var notifications = 0
    var reconnects = 0

    init(_ stderr: String) {
        for line in stderr.split(separator: "\n") where line.hasSuffix(" from advertisements") {
            let words = line.split(separator: " ")
            guard let n = words.firstIndex(where: { $0 == "notifications," }), n > 0,
                  let m = words.firstIndex(where: { $0 == "malformed" }), m > 0,
                  let r = words.firstIndex(where: { $0 == "reconnect(s)," }), r > 0,
                  let hr = Int(words[n - 1]), let bad = Int(words[m - 1]), let k = Int(words[r - 1]) else { continue }
            devices += 1
            notifications += hr + bad
            reconnects += k
        }
    }
}
